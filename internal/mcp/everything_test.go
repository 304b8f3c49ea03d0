package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// The third-party server the tests run, pinned. .ci/run installs this
// exact version; keep the two in step.
const (
	everythingPackage = "@modelcontextprotocol/server-everything"
	everythingVersion = "2026.8.31"
	// everythingCache is where .ci/run installs it, below the repository
	// root (ignored by git through /.cache/).
	everythingCache = ".cache/npm-mcp"
)

// repoRoot finds the repository root from the working directory (the
// package directory under go test): the nearest folder whose go.mod
// declares this module.
func repoRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		b, err := os.ReadFile(filepath.Join(dir, "go.mod"))
		if err == nil && bytes.Contains(b, []byte("module github.com/volcanic/telegram-agent\n")) {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("the repository root (go.mod of github.com/volcanic/telegram-agent) was not found")
		}
		dir = parent
	}
}

// everythingServer returns node and the installed server's entry point, or
// skips the test saying how to install what is missing.
func everythingServer(t *testing.T) (node, entry string) {
	t.Helper()
	root := repoRoot(t)
	install := "npm install --prefix " + everythingCache + " " + everythingPackage + "@" + everythingVersion +
		" (from " + root + "; .ci/run does it when npm is present)"
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skipf("Node.js is not installed (node not on PATH); install Node.js, then %s", install)
	}
	pkgDir := filepath.Join(root, everythingCache, "node_modules", filepath.FromSlash(everythingPackage))
	b, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if errors.Is(err, os.ErrNotExist) {
		t.Skipf("%s is not installed in %s; run %s", everythingPackage, everythingCache, install)
	}
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Version string            `json:"version"`
		Bin     map[string]string `json:"bin"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatalf("%s/package.json: %v", pkgDir, err)
	}
	if pkg.Version != everythingVersion {
		t.Skipf("%s %s is installed, the test pins %s; run %s", everythingPackage, pkg.Version, everythingVersion, install)
	}
	bin, ok := pkg.Bin["mcp-server-everything"]
	if !ok {
		t.Fatalf("%s has no mcp-server-everything bin", everythingPackage)
	}
	return node, filepath.Join(pkgDir, filepath.FromSlash(bin))
}

func TestEverythingServer(t *testing.T) {
	node, entry := everythingServer(t)
	h := newHarness(t, Config{Servers: []ServerConfig{{
		Name:    "everything",
		Command: node,
		Args:    []string{entry, "stdio"},
		Env:     map[string]string{"GITHUB_TOKEN": explicitToken, "SERVICE_PASSWORD": configuredSecret},
	}}})
	if st := h.ext.Servers(); len(st) != 1 || st[0].Err != nil || st[0].Tools == 0 {
		t.Fatalf("discovery: %+v", st)
	}
	var names []string
	for _, spec := range h.agent.Tools() {
		names = append(names, spec.Name)
	}
	envTool := ""
	for _, n := range []string{"mcp__everything__get-env", "mcp__everything__printEnv"} {
		if slices.Contains(names, n) {
			envTool = n
		}
	}
	if envTool == "" {
		t.Fatalf("no env-printing tool among %v", names)
	}

	s := h.session(t, "everything")
	msg := h.call(t, s, envTool, `{}`)
	out := agent.TextOf(msg.Content)
	if msg.IsError {
		t.Fatalf("%s failed: %s", envTool, out)
	}
	var env map[string]string
	if err := json.Unmarshal([]byte(out), &env); err != nil {
		t.Fatalf("the env output is not a JSON object: %v", err)
	}
	checkServerEnv(t, out, env)

	if slices.Contains(names, "mcp__everything__get-tiny-image") {
		img := h.call(t, s, "mcp__everything__get-tiny-image", `{}`)
		if !slices.ContainsFunc(img.Content, func(c agent.Content) bool {
			return c.Type == agent.ImageContent && c.MIMEType == "image/png" && len(c.Data) > 0
		}) {
			t.Errorf("get-tiny-image returned no PNG image: %d blocks", len(img.Content))
		}
	}
}

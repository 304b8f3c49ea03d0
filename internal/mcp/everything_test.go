//go:build unix

package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// The third-party server the tests run, pinned. .ci/run installs this
// exact version beforehand; keep the two in step.
const (
	everythingPackage = "@modelcontextprotocol/server-everything"
	everythingVersion = "2026.8.31"
	// everythingBin is the package's executable, as npx runs it.
	everythingBin = "mcp-server-everything"
	// everythingCache is where the test and .ci/run install it, below
	// the repository root (ignored by git through /.cache/).
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

// everythingServer returns npx and the arguments that start the pinned
// server from the repository's cache, offline, after installing it there
// when it is missing. It skips the test, saying why, only when Node.js or
// npm is missing or the install fails for lack of network.
func everythingServer(t *testing.T) (npx string, args []string) {
	t.Helper()
	paths := map[string]string{}
	for _, tool := range []string{"node", "npm", "npx"} {
		p, err := exec.LookPath(tool)
		if err != nil {
			t.Skipf("Node.js is not installed (%s is not on PATH): the test runs %s@%s with npx", tool, everythingPackage, everythingVersion)
		}
		paths[tool] = p
	}
	cache := filepath.Join(repoRoot(t), filepath.FromSlash(everythingCache))
	installEverything(t, paths["npm"], cache)
	return paths["npx"], []string{"--offline", "--prefix", cache, everythingBin, "stdio"}
}

// installEverything installs the pinned server in cache unless it is
// there already. An exclusive lock on a file beside cache keeps concurrent
// test runs (several packages, several checkouts' CI) from installing at
// once.
func installEverything(t *testing.T, npm, cache string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(cache), 0o755); err != nil {
		t.Fatal(err)
	}
	lock, err := os.OpenFile(cache+".lock", os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close() // closing releases the lock
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX); err != nil {
		t.Fatalf("locking %s: %v", lock.Name(), err)
	}
	missing := everythingInstalled(cache)
	if missing == nil {
		return
	}
	t.Logf("installing %s@%s in %s (%v)", everythingPackage, everythingVersion, cache, missing)
	cmd := exec.CommandContext(t.Context(), npm, "install", "--prefix", cache, "--no-audit", "--no-fund", "--loglevel=error",
		everythingPackage+"@"+everythingVersion)
	// npm needs the developer's or CI's own settings: proxy, registry, cache.
	cmd.Env = os.Environ()
	out, err := cmd.CombinedOutput()
	if err != nil {
		// The error codes npm reports when its registry cannot be reached.
		for _, code := range []string{
			"ENOTFOUND", "EAI_AGAIN", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT",
			"ENETUNREACH", "EHOSTUNREACH", "ENETDOWN", "ENOTCACHED",
		} {
			if bytes.Contains(out, []byte(code)) {
				t.Skipf("npm cannot reach its registry (%s), so %s@%s cannot be installed in %s: %v\n%s",
					code, everythingPackage, everythingVersion, cache, err, lastLines(out, 5))
			}
		}
		t.Fatalf("npm install %s@%s: %v\n%s", everythingPackage, everythingVersion, err, out)
	}
	if err := everythingInstalled(cache); err != nil {
		t.Fatalf("after npm install: %v", err)
	}
}

// everythingInstalled returns nil when cache holds the pinned version of
// the server with its executable, and otherwise an error saying what is
// missing.
func everythingInstalled(cache string) error {
	pkgDir := filepath.Join(cache, "node_modules", filepath.FromSlash(everythingPackage))
	b, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if errors.Is(err, os.ErrNotExist) {
		return errors.New("not installed")
	}
	if err != nil {
		return err
	}
	var pkg struct {
		Version string            `json:"version"`
		Bin     map[string]string `json:"bin"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		return fmt.Errorf("%s/package.json: %w", pkgDir, err)
	}
	if pkg.Version != everythingVersion {
		return fmt.Errorf("version %s is installed", pkg.Version)
	}
	if _, ok := pkg.Bin[everythingBin]; !ok {
		return fmt.Errorf("the package has no %s executable", everythingBin)
	}
	if _, err := os.Stat(filepath.Join(cache, "node_modules", ".bin", everythingBin)); err != nil {
		return fmt.Errorf("the %s executable is not linked: %w", everythingBin, err)
	}
	return nil
}

// lastLines returns the last n lines of out.
func lastLines(out []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

func TestEverythingServer(t *testing.T) {
	npx, args := everythingServer(t)
	h := newHarness(t, Config{Servers: []ServerConfig{{
		Name:    "everything",
		Command: npx,
		Args:    args,
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
			t.Errorf("get-tiny-image returned no PNG image: %d blocks: %s", len(img.Content), agent.TextOf(img.Content))
		}
	}
}

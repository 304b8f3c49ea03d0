package mcp

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// pythonProbeServer is a minimal MCP server over stdio in Python, installed
// where the operator put it (PYTHONPATH): one tool, ping.
const pythonProbeServer = `import json, sys
for line in sys.stdin:
    msg = json.loads(line)
    if "id" not in msg:
        continue
    method, result = msg.get("method"), None
    if method == "initialize":
        result = {"protocolVersion": msg["params"].get("protocolVersion", "2025-06-18"), "capabilities": {"tools": {}}, "serverInfo": {"name": "probe", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "ping", "description": "Answers pong.", "inputSchema": {"type": "object", "properties": {}}}]}
    elif method == "tools/call":
        result = {"content": [{"type": "text", "text": "pong"}]}
    elif method == "ping":
        result = {}
    if result is None:
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "error": {"code": -32601, "message": "unknown method"}}), flush=True)
    else:
        print(json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}), flush=True)
`

// stealEnv is Python that an agent plants: it writes GITHUB_TOKEN,
// reversed, to the file named after it, wherever it runs.
func stealEnv(file string) string {
	return `import os; open(` + quotePy(file) + `, "w").write(os.environ.get("GITHUB_TOKEN", "")[::-1])`
}

// quotePy quotes s as a Python string literal (JSON's are).
func quotePy(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestServerRunsNoCodeTheAgentPlanted configures a Python MCP server the
// way its guides do (python3 -m <module>, the module installed where the
// operator put it), with GITHUB_TOKEN in its env and PYTHONUSERBASE in the
// workspace (as the Docker image sets it, so that pip install --user
// works for the agent). Before the session starts the server, the agent
// plants code where Python looks first: a module of the same name in the
// workspace (the session's working directory, which python -m puts first
// on sys.path) and a .pth file in the user site-packages (which site.py
// runs at every start). Neither may run in the server's process: it holds
// the token, and the agent's code would write it where the agent reads it.
func TestServerRunsNoCodeTheAgentPlanted(t *testing.T) {
	python, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("needs python3")
	}
	// PYTHONSAFEPATH, which keeps python -m from putting the working
	// directory first on sys.path, came with Python 3.11; an older one
	// runs the planted module, as docs/security.md says.
	if out, err := exec.Command(python, "-c", "import sys; print(sys.version_info >= (3, 11))").Output(); err != nil || strings.TrimSpace(string(out)) != "True" {
		t.Skipf("needs python3 3.11 or later (PYTHONSAFEPATH): %s", strings.TrimSpace(string(out)))
	}
	install, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(install, "mcp_probe_server.py"), []byte(pythonProbeServer), 0o644); err != nil {
		t.Fatal(err)
	}
	userBase := filepath.Join(ws, ".local")
	body, err := json.Marshal(map[string]any{"mcpServers": map[string]any{"py": map[string]any{
		"command": python, "args": []string{"-m", "mcp_probe_server"},
		"env": map[string]string{"GITHUB_TOKEN": "${GITHUB_TOKEN}", "PYTHONPATH": install, "PYTHONUSERBASE": userBase},
	}}})
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(string(body), testLookup, nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	faux := agenttest.NewFauxProvider()
	h := startHarnessIn(t, ws, cfg, faux, cfg.Secrets)
	h.faux = faux

	// What the agent plants, with its bash, in the workspace.
	shadow := filepath.Join(ws, "stolen-by-module")
	if err := os.WriteFile(filepath.Join(ws, "mcp_probe_server.py"),
		[]byte(stealEnv(shadow)+"\nexec(open("+quotePy(filepath.Join(install, "mcp_probe_server.py"))+").read())\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	site, err := exec.Command(python, "-c", "import site; print(site.getusersitepackages())").Output()
	if err != nil {
		t.Fatalf("finding the user site-packages: %v", err)
	}
	sitePackages := strings.TrimSpace(strings.Replace(string(site), os.Getenv("HOME")+"/.local", userBase, 1))
	if !strings.HasPrefix(sitePackages, userBase) {
		sitePackages = filepath.Join(userBase, "lib", "python3", "site-packages")
	}
	pth := filepath.Join(ws, "stolen-by-pth")
	if err := os.MkdirAll(sitePackages, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(sitePackages, "planted.pth"), []byte(stealEnv(pth)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	s := h.session(t, "planted")
	msg := h.call(t, s, "mcp__py__ping", `{}`)
	for _, f := range []struct{ what, path string }{{"a module in the working directory", shadow}, {"a .pth file in the user site-packages", pth}} {
		if data, err := os.ReadFile(f.path); err == nil {
			t.Errorf("the server ran the agent's code from %s: it wrote %d bytes of its environment", f.what, len(data))
		}
	}
	if got := strings.TrimSpace(agent.TextOf(msg.Content)); got != "pong" {
		t.Errorf("the installed server did not answer: %d bytes", len(got))
	}
}

// TestServerEnv checks which servers get which of the interpreter
// settings, and that the configuration's own entries win.
func TestServerEnv(t *testing.T) {
	tests := []struct {
		name string
		sc   ServerConfig
		home string
		want map[string]string
	}{
		{"python -m", ServerConfig{Command: "python3", Args: []string{"-m", "mcp_server_fetch"}}, "",
			map[string]string{"PYTHONNOUSERSITE": "1", "PYTHONSAFEPATH": "1"}},
		{"python with options before -m", ServerConfig{Command: "/usr/bin/python3.11", Args: []string{"-u", "-X", "utf8", "-m", "srv"}}, "",
			map[string]string{"PYTHONNOUSERSITE": "1", "PYTHONSAFEPATH": "1"}},
		{"python -c", ServerConfig{Command: "python", Args: []string{"-c", "import srv; srv.main()"}}, "",
			map[string]string{"PYTHONNOUSERSITE": "1", "PYTHONSAFEPATH": "1"}},
		{"python with -m among combined options", ServerConfig{Command: "python3", Args: []string{"-um", "srv"}}, "",
			map[string]string{"PYTHONNOUSERSITE": "1", "PYTHONSAFEPATH": "1"}},
		{"python with the module in -m's argument", ServerConfig{Command: "python3", Args: []string{"-B", "-msrv"}}, "",
			map[string]string{"PYTHONNOUSERSITE": "1", "PYTHONSAFEPATH": "1"}},
		{"python with -c after a joined -X value", ServerConfig{Command: "python3", Args: []string{"-Xutf8", "-Ic", "import srv"}}, "",
			map[string]string{"PYTHONNOUSERSITE": "1", "PYTHONSAFEPATH": "1"}},
		{"python -W's value is not an option", ServerConfig{Command: "python3", Args: []string{"-W", "-m", "main.py"}}, "",
			map[string]string{"PYTHONNOUSERSITE": "1"}},
		{"python script after a long option's value", ServerConfig{Command: "python3", Args: []string{"--check-hash-based-pycs", "always", "main.py", "-m"}}, "",
			map[string]string{"PYTHONNOUSERSITE": "1"}},
		{"python -- ends the options", ServerConfig{Command: "python3", Args: []string{"--", "-m"}}, "",
			map[string]string{"PYTHONNOUSERSITE": "1"}},
		{"python script keeps its directory", ServerConfig{Command: "python3", Args: []string{"/opt/srv/main.py", "-m", "x"}}, "",
			map[string]string{"PYTHONNOUSERSITE": "1"}},
		{"npx", ServerConfig{Command: "npx", Args: []string{"-y", "@modelcontextprotocol/server-github"}, Env: map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "t0ken-value-123"}}, "",
			map[string]string{"PYTHONNOUSERSITE": "1", "GITHUB_PERSONAL_ACCESS_TOKEN": "t0ken-value-123"}},
		{"the configuration's entries win", ServerConfig{Command: "python3", Args: []string{"-m", "srv"}, Env: map[string]string{"PYTHONNOUSERSITE": "", "PYTHONSAFEPATH": ""}}, "",
			map[string]string{"PYTHONNOUSERSITE": "", "PYTHONSAFEPATH": ""}},
		{"a server home", ServerConfig{Command: "npx", Env: map[string]string{"XDG_CACHE_HOME": "/var/cache/mcp"}}, "/data/mcp-home",
			map[string]string{"PYTHONNOUSERSITE": "1", "HOME": "/data/mcp-home", "npm_config_cache": "/data/mcp-home/.npm",
				"npm_config_prefix": "/data/mcp-home/.npm-global", "NPM_CONFIG_CACHE": "<removed>", "NPM_CONFIG_PREFIX": "<removed>",
				"PYTHONUSERBASE": "/data/mcp-home/.local", "XDG_CACHE_HOME": "/var/cache/mcp"}},
		{"a server home with npm's cache named in upper case", ServerConfig{Command: "npx", Env: map[string]string{"NPM_CONFIG_CACHE": "/var/cache/npm"}}, "/data/mcp-home",
			map[string]string{"PYTHONNOUSERSITE": "1", "HOME": "/data/mcp-home", "NPM_CONFIG_CACHE": "/var/cache/npm",
				"npm_config_prefix": "/data/mcp-home/.npm-global", "NPM_CONFIG_PREFIX": "<removed>",
				"PYTHONUSERBASE": "/data/mcp-home/.local", "XDG_CACHE_HOME": "/data/mcp-home/.cache"}},
		{"a server home with npm's prefix named in lower case", ServerConfig{Command: "npx", Env: map[string]string{"npm_config_prefix": "/opt/npm"}}, "/data/mcp-home",
			map[string]string{"PYTHONNOUSERSITE": "1", "HOME": "/data/mcp-home", "npm_config_cache": "/data/mcp-home/.npm",
				"NPM_CONFIG_CACHE": "<removed>", "npm_config_prefix": "/opt/npm",
				"PYTHONUSERBASE": "/data/mcp-home/.local", "XDG_CACHE_HOME": "/data/mcp-home/.cache"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]string{}
			for k, v := range serverEnv(tt.sc, tt.home) {
				if v == nil {
					got[k] = "<removed>"
					continue
				}
				got[k] = *v
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("serverEnv (-want +got):\n%s", diff)
			}
		})
	}
}

// TestServersKeepTheirCodeOutOfTheWorkspace runs a server whose command is
// named npx (the fake server behind a link) with a server home
// configured. npx runs a package it finds in node_modules under its
// working directory (a planted one, when that is the workspace: tried by
// hand, npx -y @scope/pkg ran ./node_modules/.bin's with the environment)
// and reuses what its cache holds, which the Docker image keeps in the
// workspace: the server must run in its home, with HOME, npm's cache and
// prefix, pip's user base and the XDG cache there, out of the agent's
// reach.
func TestServersKeepTheirCodeOutOfTheWorkspace(t *testing.T) {
	dir, home := t.TempDir(), filepath.Join(t.TempDir(), "mcp-home")
	npx := filepath.Join(dir, "npx")
	if err := os.Symlink(testBinary(t), npx); err != nil {
		t.Fatal(err)
	}
	cwdLog := filepath.Join(t.TempDir(), "cwd.log")
	cfg := Config{Servers: []ServerConfig{{Name: "fake", Command: npx, Args: []string{fakeServerArg, "-cwd-log", cwdLog}}}}
	h := newHarness(t, cfg, WithServerHome(home))
	s := h.session(t, "npx")
	out := agent.TextOf(h.call(t, s, "mcp__fake__env", `{}`).Content)
	vars := map[string]string{}
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			vars[k] = v
		}
	}
	want := map[string]string{
		"HOME":              home,
		"npm_config_cache":  filepath.Join(home, ".npm"),
		"npm_config_prefix": filepath.Join(home, ".npm-global"),
		"PYTHONUSERBASE":    filepath.Join(home, ".local"),
		"XDG_CACHE_HOME":    filepath.Join(home, ".cache"),
	}
	got := map[string]string{}
	for k := range want {
		got[k] = vars[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the server's environment (-want +got):\n%s", diff)
	}
	lines := readLines(t, cwdLog)
	if len(lines) != 2 {
		t.Fatalf("the fake server started %d times, want 2 (discovery, session)", len(lines))
	}
	if want := realPath(t, home); lines[1] != want {
		t.Errorf("the session's npx server ran in %s, want its home %s", lines[1], want)
	}
	if info, err := os.Stat(home); err != nil || info.Mode().Perm() != 0o700 {
		t.Errorf("the server home: %v, %v; want a directory of mode 0700", info, err)
	}
}

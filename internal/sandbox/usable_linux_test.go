package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// goCache is a build cache the unprivileged user may share between runs,
// so the go build case compiles the standard library once per machine.
// The test adds it to the view as an operator adds a cache with
// AGENT_SANDBOX_WRITE.
var goCache = filepath.Join(os.TempDir(), "telegram-agent-sandbox-gocache")

// TestSandboxWorkspaceUsable checks that the workspace stays fully usable
// inside the sandbox, as the unprivileged user: git, a Python venv, npx of
// an installed package, go build of a module, and reading /usr/share.
func TestSandboxWorkspaceUsable(t *testing.T) {
	if err := os.MkdirAll(goCache, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(goCache, 0o777); err != nil {
		t.Fatal(err)
	}
	l := newLayout(t, sandbox.Paths{Write: []string{goCache}})
	tests := []struct {
		name   string
		needs  []string
		setup  func(t *testing.T, dir string)
		script string
	}{
		{name: "git init && git commit", needs: []string{"git"},
			script: `set -e; git init -q repo; cd repo; echo hello > a.txt; mkdir -p sub; echo x > sub/b.txt
git add -A; git -c user.email=a@example.com -c user.name=agent commit -q -m first
git mv a.txt sub/a.txt; git -c user.email=a@example.com -c user.name=agent commit -q -m moved; git gc -q; git log --oneline | wc -l | grep -qx 2`},
		{name: "python3 -m venv", needs: []string{"python3"},
			script: `set -e; python3 -m venv venv; ./venv/bin/python -c 'import sys; print(sys.prefix)' | grep -q venv`},
		{name: "npx of an installed package", needs: []string{"node", "npx"},
			setup: func(t *testing.T, dir string) {
				writePublic(t, filepath.Join(dir, "package.json"), `{"name":"ws","version":"1.0.0","private":true}`)
				pkg := filepath.Join(dir, "node_modules", "hello")
				mkdirPublic(t, pkg)
				mkdirPublic(t, filepath.Join(dir, "node_modules", ".bin"))
				writePublic(t, filepath.Join(pkg, "package.json"), `{"name":"hello","version":"1.0.0","bin":{"hello":"cli.js"}}`)
				writePublic(t, filepath.Join(pkg, "cli.js"), "#!/usr/bin/env node\nconsole.log('hello from npx')\n")
				if err := os.Chmod(filepath.Join(pkg, "cli.js"), 0o777); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("../hello/cli.js", filepath.Join(dir, "node_modules", ".bin", "hello")); err != nil {
					t.Fatal(err)
				}
			},
			script: `set -e; npx --offline --no-install hello | grep -qx 'hello from npx'`},
		{name: "go build in the workspace", needs: []string{"go"},
			setup: func(t *testing.T, dir string) {
				mod := filepath.Join(dir, "app")
				mkdirPublic(t, mod)
				writePublic(t, filepath.Join(mod, "go.mod"), "module example.com/app\n\ngo 1.22\n")
				writePublic(t, filepath.Join(mod, "main.go"), "package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"built\") }\n")
			},
			script: `set -e; cd app; GOCACHE="$GOCACHE_DIR" GOPATH="$HOME/gopath" GOTOOLCHAIN=local GOPROXY=off GOFLAGS=-mod=mod go build -o app . ; ./app | grep -qx built`},
		{name: "read /usr/share", script: `set -e; ls /usr/share >/dev/null; f=$(find /usr/share -maxdepth 2 -type f -readable | head -1); test -n "$f"; head -c 64 "$f" >/dev/null`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, tool := range tt.needs {
				if _, err := lookTool(tool); err != nil {
					t.Skipf("%s is not installed on %s", tool, testPATH)
				}
			}
			if tt.setup != nil {
				tt.setup(t, l.workspace)
			}
			out, err := l.run(t, tt.script, true, "GOCACHE_DIR="+goCache)
			if err != nil {
				t.Errorf("sandboxed: %v; output:\n%s", err, out)
			}
		})
	}
}

// lookTool finds tool on testPATH.
func lookTool(tool string) (string, error) {
	for _, dir := range filepath.SplitList(testPATH) {
		p := filepath.Join(dir, tool)
		if info, err := os.Stat(p); err == nil && !info.IsDir() && info.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", exec.ErrNotFound
}

package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// fakeClaudeScript answers claude --version and auth status, and writes
// its environment to $HOME/env.txt.
const fakeClaudeScript = `#!/bin/sh
env > "$HOME/env.txt"
case "$1" in
--version) echo "2.1.197 (Claude Code)" ;;
auth) echo '{"loggedIn": LOGGED, "authMethod": "METHOD", "apiProvider": "firstParty"}' ;;
esac
`

// TestDoctorClaudeCode shows the provider, the login state and the
// bridge's tools, probing claude as a provider process: its environment
// holds none of the host's secrets.
func TestDoctorClaudeCode(t *testing.T) {
	for _, loggedIn := range []bool{true, false} {
		name := map[bool]string{true: "logged in", false: "not logged in"}[loggedIn]
		t.Run(name, func(t *testing.T) {
			bin := t.TempDir()
			script := strings.NewReplacer("LOGGED", map[bool]string{true: "true", false: "false"}[loggedIn],
				"METHOD", map[bool]string{true: "claude.ai", false: "none"}[loggedIn]).Replace(fakeClaudeScript)
			if err := os.WriteFile(filepath.Join(bin, "claude"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
			environ := doctorEnviron()
			environ["PATH"] = bin + ":/usr/bin:/bin"
			e := goodEnv()
			e.ModelProvider = "claude-code"
			e.AgentDir = filepath.Join(t.TempDir(), "data")
			e.WorkspaceDir = filepath.Join(t.TempDir(), "workspace")
			if err := os.MkdirAll(filepath.Join(e.AgentDir, "claude-code"), 0o700); err != nil {
				t.Fatal(err)
			}
			out, _ := runDoctorIn(t, e, environ, func(context.Context, *spawnpolicy.Policy) error { return nil })
			want := []string{
				"claude-code: claude -p on your Claude plan, provider home " + filepath.Join(e.AgentDir, "claude-code"),
				"claude 2.1.197",
				"bridge tools (claude's only tools): mcp__host__bash, mcp__host__read, mcp__host__write, mcp__host__edit",
				"model provider: claude-code",
			}
			if loggedIn {
				want = append(want, "login: logged in (claude.ai)")
			} else {
				want = append(want, "PROBLEM: Claude Code is not logged in: run `telegram-bot claude-login`")
			}
			for _, w := range want {
				if !strings.Contains(out, w) {
					t.Errorf("the doctor's output lacks %q:\n%s", w, out)
				}
			}
			assertNoSecrets(t, out)
			env, err := os.ReadFile(filepath.Join(e.AgentDir, "claude-code", "env.txt"))
			if err != nil {
				t.Fatal(err)
			}
			for name, v := range doctorEnviron() {
				if len(v) >= 8 && name != "PATH" && name != "HOME" && strings.Contains(string(env), v) {
					t.Errorf("the value of %s reached the doctor's claude probe", name)
				}
			}
		})
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestExposingParent(t *testing.T) {
	const secret = "sk-fake-parent-secret-0019"
	proc := t.TempDir()
	write := func(pid, environ, comm string) {
		t.Helper()
		dir := filepath.Join(proc, pid)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if environ != "" {
			if err := os.WriteFile(filepath.Join(dir, "environ"), []byte(environ), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(dir, "comm"), []byte(comm+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("100", "PATH=/bin\x00OPENAI_API_KEY="+secret+"\x00", "go")
	write("200", "PATH=/bin\x00HOME=/root\x00", "bash")
	write("300", "", "hardened") // no environ file: unreadable
	write("1", "PATH=/bin\x00OPENAI_API_KEY="+secret+"\x00", "tini")
	tests := []struct {
		name string
		ppid int
		want string
	}{
		{name: "go run holds the secret", ppid: 100, want: "the parent process 100 (go) holds the bot's secrets"},
		{name: "a clean parent", ppid: 200},
		{name: "an unreadable parent", ppid: 300},
		{name: "a readable init (tini in a container)", ppid: 1, want: "the parent process 1 (tini) holds the bot's secrets"},
		{name: "no parent", ppid: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := exposingParent(proc, tt.ppid, []string{secret})
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("exposingParent = %q, want %q", got, tt.want)
			}
			if strings.Contains(got, secret) {
				t.Error("the warning holds the secret")
			}
		})
	}
}

package tools_test

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// execLookPath finds a program in the test's own PATH (for skipping).
func execLookPath(name string) (string, error) { return exec.LookPath(name) }

// TestExecEnvOnFilteredBase checks that ExecOptions.Env
// still sets and removes variables, on top of the filtered environment.
func TestExecEnvOnFilteredBase(t *testing.T) {
	set := "set-by-exec"
	f := newFixture(t, fixtureConfig{})
	res, err := f.session.ToolContext().WithOrigin("ext").Exec(t.Context(), "env", nil, agent.ExecOptions{
		Env: map[string]*string{"NEW_VAR": &set, "KEEP_ME": nil},
	})
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	got := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
		name, _, _ := strings.Cut(line, "=")
		got[name] = true
	}
	want := map[string]bool{"NEW_VAR": true, "PATH": true, "HOME": true, "LANG": true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("variable names (-want +got):\n%s", diff)
	}
	if !strings.Contains(res.Stdout, "NEW_VAR=set-by-exec") {
		t.Errorf("NEW_VAR not set: %q", res.Stdout)
	}
}

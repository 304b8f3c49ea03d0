//go:build unix

package agent_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// TestExecChildPath checks that Exec looks a bare command name up on the
// child's PATH, not the host's, and on the host's only when the child has
// none.
func TestExecChildPath(t *testing.T) {
	if _, err := exec.LookPath("date"); err != nil {
		t.Skip("no date on the host's PATH")
	}
	dir := t.TempDir()
	script := filepath.Join(dir, "date")
	if err := os.WriteFile(script, []byte("#!/bin/sh\necho child-date\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	empty := t.TempDir()
	tests := []struct {
		name       string
		path       *string // the child's PATH; nil removes it
		want       string
		wantNotHas string
		notFound   bool
	}{
		{name: "child PATH wins", path: &dir, want: "child-date"},
		{name: "no child PATH: the host's", path: nil, wantNotHas: "child-date"},
		{name: "not on the child PATH", path: &empty, notFound: true},
	}
	ext := &funcExtension{name: "runner", activate: func(ctx context.Context, api *agent.API) error { return nil }}
	a := newTestAgent(t, agenttest.NewFauxProvider(), agent.WithExtensions(ext))
	tc := openSession(t, a, agent.SessionOptions{ID: "path"}).ToolContext().WithOrigin("runner")
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := tc.Exec(context.Background(), "date", nil, agent.ExecOptions{Env: map[string]*string{"PATH": tt.path}})
			if tt.notFound {
				if !errors.Is(err, exec.ErrNotFound) {
					t.Errorf("Exec = %v, want exec.ErrNotFound", err)
				}
				return
			}
			if err != nil || res.ExitCode != 0 {
				t.Fatalf("Exec = %v, exit %d, stderr %q", err, res.ExitCode, res.Stderr)
			}
			out := strings.TrimSpace(res.Stdout)
			if tt.want != "" && out != tt.want {
				t.Errorf("stdout %q, want %q", out, tt.want)
			}
			if tt.wantNotHas != "" && (out == "" || strings.Contains(out, tt.wantNotHas)) {
				t.Errorf("stdout %q: want the host's date", out)
			}
		})
	}
}

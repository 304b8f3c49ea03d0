package sandbox_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// TestParseMode checks the AGENT_SANDBOX values.
func TestParseMode(t *testing.T) {
	for in, want := range map[string]sandbox.Mode{"": sandbox.Auto, "auto": sandbox.Auto, " REQUIRED ": sandbox.Required, "off": sandbox.Off} {
		got, err := sandbox.ParseMode(in)
		if err != nil || got != want {
			t.Errorf("ParseMode(%q) = %v, %v; want %v", in, got, err, want)
		}
		if got.String() != strings.ToLower(strings.TrimSpace(in)) && in != "" {
			t.Errorf("%v.String() = %q", got, got.String())
		}
	}
	if _, err := sandbox.ParseMode("on"); err == nil {
		t.Error(`ParseMode("on") succeeded, want an error`)
	}
}

// TestViewHide checks what Hide does with each hidden path: nothing
// outside the view, a carve inside a read-only tree, an error inside a
// writable one or when the path is a granted tree itself.
func TestViewHide(t *testing.T) {
	ws := t.TempDir()
	v := sandbox.View{Workspace: ws, Temp: filepath.Join(ws, ".tmp"), System: []string{"/usr", "/etc"}, Extra: sandbox.Paths{Read: []string{"/srv/shared"}}}
	const (
		none   = "none"
		carved = "carved"
		failed = "error"
	)
	tests := []struct {
		name, path, want string
	}{
		{name: "beside the workspace", path: filepath.Join(filepath.Dir(ws), "data"), want: none},
		{name: "inside the workspace", path: filepath.Join(ws, "data"), want: failed},
		{name: "the workspace itself", path: ws, want: failed},
		{name: "under /etc", path: "/etc/telegram-agent/mcp.json", want: carved},
		{name: "/etc itself", path: "/etc", want: failed},
		{name: "a name that only starts like /etc", path: "/etcetera/data", want: none},
		{name: "under a readable addition", path: "/srv/shared/x", want: carved},
		{name: "a process's /proc", path: "/proc/1", want: failed},
		{name: "elsewhere", path: "/var/lib/bot", want: none},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := v.Hide(map[string]string{"AGENT_DIR": tt.path})
			outcome := none
			switch {
			case err != nil:
				outcome = failed
			case len(got.Hidden) > 0:
				outcome = carved
			}
			if outcome != tt.want {
				t.Errorf("Hide(%s) = hidden %q, error %v: %s, want %s", tt.path, got.Hidden, err, outcome, tt.want)
			}
		})
	}
}

// TestViewSummaryAndValidate checks the start-up line's view and the
// problems Validate reports.
func TestViewSummaryAndValidate(t *testing.T) {
	v := sandbox.View{Workspace: "/workspace", Temp: "/tmp/a"}
	if diff := cmp.Diff("workspace rw, system ro", v.Summary()); diff != "" {
		t.Errorf("Summary (-want +got):\n%s", diff)
	}
	more := v.With(sandbox.Paths{Read: []string{"/srv"}, Write: []string{"/cache", "/data2"}})
	if diff := cmp.Diff("workspace rw, system ro, 1 more ro, 2 more rw", more.Summary()); diff != "" {
		t.Errorf("Summary with additions (-want +got):\n%s", diff)
	}
	if len(v.Extra.Read) != 0 {
		t.Error("With changed the view it was called on")
	}
	bad := sandbox.View{Extra: sandbox.Paths{Write: []string{"relative"}}}
	err := bad.Validate()
	for _, want := range []string{"no workspace", "no temporary directory", `"relative" is not absolute`} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to say %q", err, want)
		}
	}
	if _, err := sandbox.NewLauncher("relative/bot", v); err == nil {
		t.Error("NewLauncher accepted a relative executable")
	}
}

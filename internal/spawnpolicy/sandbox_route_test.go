package spawnpolicy

import (
	"log/slog"
	"os/exec"
	"slices"
	"testing"

	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// TestApplyToRoutesThroughTheSandbox checks that a policy with a sandbox
// makes ApplyTo start the launcher (never the command itself, and never
// with the command's environment in the launcher's own), even when a hook
// returns a context built from scratch; and that a policy without one
// leaves the command as it is.
func TestApplyToRoutesThroughTheSandbox(t *testing.T) {
	dir := t.TempDir()
	launcher, err := sandbox.NewLauncher("/usr/local/bin/telegram-bot", sandbox.View{Workspace: dir, Temp: dir})
	if err != nil {
		t.Fatal(err)
	}
	fresh := func(c Context) (Context, error) {
		return Context{Command: c.Command, Cwd: c.Cwd, Env: map[string]string{"FROM_HOOK": "1"}}, nil
	}
	tests := []struct {
		name      string
		sandbox   *sandbox.Launcher
		hooks     []Hook
		wantRoute bool
	}{
		{name: "sandbox on", sandbox: launcher, wantRoute: true},
		{name: "sandbox on, a hook returns a new context", sandbox: launcher, hooks: []Hook{fresh}, wantRoute: true},
		{name: "sandbox off", sandbox: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.HardenHostProcess = false
			opts.Sandbox = tt.sandbox
			opts.Hooks = tt.hooks
			p, err := New(opts, slog.New(slog.DiscardHandler), func() map[string]string { return map[string]string{"PATH": "/usr/bin"} })
			if err != nil {
				t.Fatal(err)
			}
			pc, err := p.Prepare(Request{Purpose: BashTool, Command: "true", Cwd: dir, SandboxPaths: sandbox.Paths{Read: []string{"/srv"}}})
			if err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("/usr/bin/true")
			pc.ApplyTo(cmd)
			routed := cmd.Path == launcher.Executable() && len(cmd.Args) == 3 && cmd.Args[1] == sandbox.LaunchArg
			if routed != tt.wantRoute {
				t.Fatalf("routed through the launcher = %v (path %s, args %q), want %v", routed, cmd.Path, cmd.Args, tt.wantRoute)
			}
			if set := pc.Sandbox != nil; set != tt.wantRoute {
				t.Errorf("Context.Sandbox set = %v, want %v", set, tt.wantRoute)
			}
			if !tt.wantRoute {
				return
			}
			if len(cmd.ExtraFiles) != 1 {
				t.Errorf("%d extra files, want the one carrying the command", len(cmd.ExtraFiles))
			}
			if slices.ContainsFunc(cmd.Env, func(kv string) bool { return kv == "PATH=/usr/bin" || kv == "FROM_HOOK=1" }) {
				t.Errorf("the launcher's own environment %q holds the command's", cmd.Env)
			}
			if cmd.Env == nil {
				t.Error("the launcher's environment is nil: it would inherit the bot's")
			}
			if !slices.Equal(pc.SandboxPaths.Read, []string{"/srv"}) {
				t.Errorf("SandboxPaths.Read = %q, want the request's", pc.SandboxPaths.Read)
			}
		})
	}
}

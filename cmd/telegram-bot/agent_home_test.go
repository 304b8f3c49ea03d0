package main

import (
	"testing"

	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// TestAgentProcessesLiveInTheWorkspace: an agent process's HOME is the
// workspace unless something set it on purpose, so it can never write the
// bot's (or an operator shell's) start-up files.
func TestAgentProcessesLiveInTheWorkspace(t *testing.T) {
	const workspace, botHome = "/srv/workspace", "/home/bot"
	tests := []struct {
		name    string
		environ map[string]string
		env     map[string]*string
		want    string
	}{
		{"inherited home", map[string]string{"HOME": botHome, "PATH": "/usr/bin"}, nil, workspace},
		{"no home", map[string]string{"PATH": "/usr/bin"}, nil, workspace},
		{"set on purpose", map[string]string{"HOME": botHome}, map[string]*string{"HOME": ptr("/srv/mcp-home")}, "/srv/mcp-home"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			environ := tt.environ
			opts := spawnpolicy.DefaultOptions()
			opts.HardenHostProcess = false
			opts.Hooks = []spawnpolicy.Hook{agentHome(workspace, environ["HOME"])}
			p, err := spawnpolicy.New(opts, nil, func() map[string]string { return environ })
			if err != nil {
				t.Fatal(err)
			}
			c, err := p.Prepare(spawnpolicy.Request{Purpose: spawnpolicy.BashTool, Command: "true", Cwd: workspace, Env: tt.env})
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Env["HOME"]; got != tt.want {
				t.Errorf("HOME = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestConfigGivesAgentProcessesTheWorkspaceAsHome checks the wiring: the
// policy the configuration builds carries the hook.
func TestConfigGivesAgentProcessesTheWorkspaceAsHome(t *testing.T) {
	environ := map[string]string{"HOME": "/home/bot", "PATH": "/usr/bin"}
	c, err := goodEnv().Parse(environ)
	if err != nil {
		t.Fatal(err)
	}
	c.Policy.HardenHostProcess = false
	p, err := spawnpolicy.New(c.Policy, nil, func() map[string]string { return environ })
	if err != nil {
		t.Fatal(err)
	}
	ctx, err := p.Prepare(spawnpolicy.Request{Purpose: spawnpolicy.BashTool, Command: "true", Cwd: c.WorkspaceDir})
	if err != nil {
		t.Fatal(err)
	}
	if got := ctx.Env["HOME"]; got != c.WorkspaceDir {
		t.Errorf("HOME = %q, want the workspace %q", got, c.WorkspaceDir)
	}
}

func ptr(s string) *string { return &s }

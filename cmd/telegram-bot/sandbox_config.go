package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// SandboxConfig is the agent sandbox's configuration: AGENT_SANDBOX,
// AGENT_SANDBOX_READ and AGENT_SANDBOX_WRITE.
type SandboxConfig struct {
	Mode sandbox.Mode
	// Read and Write are the operator's additions to the view.
	Read, Write []string
	// Spawner, set by run once the bot started one (agent_user.go), starts
	// the agent's launchers as AGENT_UID and AGENT_GID; nil when agent
	// processes run as the bot's own uid.
	Spawner *sandbox.Spawner
}

// parseSandbox checks the AGENT_SANDBOX* variables, and that the sandbox
// can hide the agent dir: one inside the workspace cannot be (the
// workspace is the agent's to read and write).
func parseSandbox(e Env, agentDir, workspace string) (SandboxConfig, error) {
	var errs []error
	mode, err := sandbox.ParseMode(e.AgentSandbox)
	if err != nil {
		errs = append(errs, fmt.Errorf("AGENT_SANDBOX must be auto, required or off, not %q", e.AgentSandbox))
	}
	c := SandboxConfig{Mode: mode}
	for _, v := range []struct {
		name string
		raw  string
		dst  *[]string
	}{{"AGENT_SANDBOX_READ", e.AgentSandboxRead, &c.Read}, {"AGENT_SANDBOX_WRITE", e.AgentSandboxWrite, &c.Write}} {
		for _, p := range splitList(v.raw) {
			if !filepath.IsAbs(p) {
				errs = append(errs, fmt.Errorf("%s: %q is not an absolute path", v.name, p))
				continue
			}
			*v.dst = append(*v.dst, filepath.Clean(p))
		}
	}
	if mode != sandbox.Off && agentDir != "" && workspace != "" {
		if _, err := (sandbox.View{Workspace: workspace, Temp: workspace}).Hide(map[string]string{"AGENT_DIR": agentDir}); err != nil {
			errs = append(errs, fmt.Errorf("AGENT_DIR (%s) is inside WORKSPACE_DIR (%s): the agent sandbox could not hide the bot's state; move one of them, or set AGENT_SANDBOX=off", agentDir, workspace))
		}
	}
	return c, errors.Join(errs...)
}

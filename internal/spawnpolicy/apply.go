package spawnpolicy

import (
	"os/exec"
	"slices"
)

// ApplyTo makes cmd run with c's working directory and exactly c's
// environment: it sets cmd.Dir and replaces cmd.Env with c.Env as sorted
// "name=value" entries. cmd.Env is never left nil (an empty environment is an
// empty, non-nil slice), because an exec.Cmd with a nil Env inherits the whole
// host environment. It does not touch cmd.Path or cmd.Args: how Command and
// Args become a process (directly, or through a shell) is the spawner's
// choice.
//
// When the policy has a sandbox, ApplyTo then routes cmd through the
// sandbox launcher ([sandbox.Launcher.Wrap]): cmd starts the launcher,
// which starts the command, with exactly this environment and working
// directory, confined to the sandbox's view plus the request's
// SandboxPaths. Set cmd.Path, cmd.Args and cmd.ExtraFiles before ApplyTo,
// and the process group (procgroup.Set) after it.
func (c Context) ApplyTo(cmd *exec.Cmd) {
	env := make([]string, 0, len(c.Env))
	for name, value := range c.Env {
		env = append(env, name+"="+value)
	}
	slices.Sort(env)
	cmd.Dir = c.Cwd
	cmd.Env = env
	if c.Sandbox != nil {
		c.Sandbox.Wrap(cmd, c.SandboxPaths)
	}
}

// Start starts cmd, which ApplyTo prepared, as cmd.Start does. With a
// sandbox it goes through [sandbox.Launcher.Start]: a launcher started
// ahead takes the command when it can (so the command does not wait for
// the launcher's own start), and the bot's copy of the command's spec is
// closed at once. Use it in place of cmd.Start, then cmd.Wait as usual.
func (c Context) Start(cmd *exec.Cmd) error {
	if c.Sandbox != nil {
		return c.Sandbox.Start(cmd)
	}
	return cmd.Start()
}

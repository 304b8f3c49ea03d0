package spawnpolicy

import "github.com/volcanic/telegram-agent/internal/sandbox"

// Context is the complete context a child process gets: its command,
// arguments, working directory and entire environment. Env holds every
// variable the child sees; nothing else is inherited.
type Context struct {
	// Purpose is copied from the [Request]; hooks cannot change it.
	Purpose Purpose
	// Command is the command line or executable to run.
	Command string
	// Args are the command's arguments.
	Args []string
	// Cwd is the child's working directory.
	Cwd string
	// Env is the child's complete environment. Names compare ordinally on
	// Unix and case-insensitively on Windows, as the OS does.
	Env map[string]string
	// Scope is copied from the [Request]; hooks cannot change it.
	Scope string
	// SessionID is copied from the [Request]; hooks cannot change it.
	SessionID string
	// Origin is copied from the [Request]; hooks cannot change it.
	Origin string
	// Sandbox is the policy's launcher ([Options.Sandbox]), nil when the
	// sandbox is off; hooks cannot change it.
	Sandbox *sandbox.Launcher
	// SandboxPaths is copied from the [Request]; hooks cannot change it.
	SandboxPaths sandbox.Paths
	// Notices is the policy's [Options.Notices], nil when it has none;
	// hooks cannot change it.
	Notices Notices
}

// Restore returns c with what no hook or handler may change taken from
// from: Purpose, Scope, SessionID, Origin, Sandbox, SandboxPaths and
// Notices.
// Whoever runs
// hooks over a prepared context calls it on each result, so a hook that
// returns a new Context cannot drop the sandbox.
func (c Context) Restore(from Context) Context {
	c.Purpose, c.Scope, c.SessionID, c.Origin = from.Purpose, from.Scope, from.SessionID, from.Origin
	c.Sandbox, c.SandboxPaths, c.Notices = from.Sandbox, from.SandboxPaths, from.Notices
	return c
}

// Hook rewrites a child's context, like pi's bash spawn hook generalised to
// every agent-requested process. A hook must be pure and synchronous: it gets
// its own copy of the context and returns the new one. It may change Command,
// Args, Cwd and Env; Purpose, Scope, SessionID and Origin are restored from
// the request whatever it returns. A hook that returns an error, panics, or
// returns a context without a command, a working directory or an environment
// fails the spawn.
type Hook func(Context) (Context, error)

// clone returns a deep copy of c, so a hook that mutates its input cannot
// change what the policy or another hook holds.
func (c Context) clone() Context {
	out := c
	if c.Args != nil {
		out.Args = append([]string(nil), c.Args...)
	}
	if c.Env != nil {
		out.Env = make(map[string]string, len(c.Env))
		for k, v := range c.Env {
			out.Env[k] = v
		}
	}
	return out
}

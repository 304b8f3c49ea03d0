package spawnpolicy

import "github.com/volcanic/telegram-agent/internal/sandbox"

// Request is what a spawner asks for. [Policy.Prepare] turns it into the
// complete child [Context].
type Request struct {
	// Purpose says why the process is started.
	Purpose Purpose
	// Command is a shell command line (BashTool, ScheduledScript) or an
	// executable (MCPServer, ExtensionExec). It must not be empty.
	Command string
	// Args are the command's arguments, if any.
	Args []string
	// Cwd is the child's working directory. It must not be empty.
	Cwd string
	// Env is the explicit environment, applied after the filter and never
	// filtered: a non-nil value sets the variable, a nil value removes it.
	Env map[string]*string
	// TimeZoneID is an IANA time zone id; it sets TZ unless Env names TZ.
	// It is ignored on Windows, where the OS does not use TZ.
	TimeZoneID string
	// Scope is the session scope or scheduler target, for hooks that differ
	// per chat.
	Scope string
	// SessionID is the session the process belongs to, if any.
	SessionID string
	// Origin says who asked: the extension, MCP server or job id.
	// Informational.
	Origin string
	// SandboxPaths adds paths to this process's sandbox view (an MCP
	// server's own, from its configuration entry). Ignored without a
	// sandbox.
	SandboxPaths sandbox.Paths
}

package spawnpolicy

import "strconv"

// Purpose says why a process is started. Hooks may treat purposes
// differently; the policy itself filters every purpose the same way.
type Purpose int

// The purposes of the processes started on the agent's behalf.
const (
	// BashTool is a command line the model runs through the bash tool.
	BashTool Purpose = iota
	// ScheduledScript is a scheduler watcher script.
	ScheduledScript
	// MCPServer is an MCP stdio server process.
	MCPServer
	// ExtensionExec is a process an extension starts.
	ExtensionExec
	// Other is any other agent-requested process.
	Other
)

// String returns the purpose's name, or "Purpose(n)" for a value outside the
// defined ones.
func (p Purpose) String() string {
	switch p {
	case BashTool:
		return "BashTool"
	case ScheduledScript:
		return "ScheduledScript"
	case MCPServer:
		return "MCPServer"
	case ExtensionExec:
		return "ExtensionExec"
	case Other:
		return "Other"
	default:
		return "Purpose(" + strconv.Itoa(int(p)) + ")"
	}
}

// Package procgroup starts a command in a process group of its own and ends
// that whole group, grandchildren included: SIGTERM, then SIGKILL after a
// grace period, or SIGKILL at once. Outside Unix, where process groups do
// not exist, the same calls act on the process itself, and its children may
// survive it.
//
// It imports only the standard library and golang.org/x/sys/unix, so every
// spawner of the project (the agent's Exec, the bash tool, the scheduler's
// watchers, the MCP servers) can share it.
package procgroup

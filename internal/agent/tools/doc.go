// Package tools holds the agent's built-in tools: bash, read, write and edit.
//
// Every process a tool starts goes through the session's
// [agent.ToolContext.PrepareProcess], so the spawn policy, the host hooks and
// the extensions' process_spawn handlers decide what the child sees; the
// child's environment is always the prepared one, never the host's. Relative
// paths resolve against the session's workspace; absolute paths are allowed,
// because the tools are not a sandbox. The tools never redact their output
// themselves: the agent loop redacts every result and progress report.
package tools

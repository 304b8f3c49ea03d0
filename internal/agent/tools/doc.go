// Package tools holds the agent's built-in tools: bash, read, write and edit.
//
// Every process a tool starts goes through the session's
// [agent.ToolContext.PrepareProcess], so the spawn policy, the host hooks and
// the extensions' process_spawn handlers decide what the child sees; the
// child's environment is always the prepared one, never the host's. Relative
// paths resolve against the session's workspace; absolute paths are allowed,
// because the tools are not a sandbox.
//
// The agent loop redacts every result and progress report. Bash also
// redacts its output stream itself, with the session's redactor, before the
// stream reaches the tail it returns, its progress snapshots and the file
// it saves a long output in, so that no secret is ever written to disk or
// cut in two by the tail's limit.
package tools

// Package tools holds the agent's built-in tools: bash, read, write, edit and
// send_file.
//
// Every process a tool starts goes through the session's
// [agent.ToolContext.PrepareProcess], so the spawn policy, the host hooks and
// the extensions' process_spawn handlers decide what the child sees; the
// child's environment is always the prepared one, never the host's, and with
// the agent sandbox on it starts through the sandbox launcher. Relative paths
// resolve against the session's workspace. The file tools run in the bot, so
// the kernel cannot confine them: they open every path through the sandbox's
// view ([WithView]), which grants what the launcher grants agent processes
// and refuses the rest (AGENT_DIR, another process's /proc entries); without
// a view (AGENT_SANDBOX=off) they open what the bot's user can.
//
// The agent loop redacts every result and progress report. Bash also
// redacts its output stream itself, with the session's redactor, before the
// stream reaches the tail it returns, its progress snapshots and the file
// it saves a long output in, so that no secret is ever written to disk or
// cut in two by the tail's limit.
package tools

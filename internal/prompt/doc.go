// Package prompt builds the agent's system prompt: who the agent is, that it
// talks on Telegram (and the Markdown the chat renders), its tools, its
// workspace, the current time in the chat's zone, what [REDACTED] means and
// how to schedule jobs, followed by the operator's instructions from
// SYSTEM.md in the agent dir and AGENTS.md in the workspace.
package prompt

// Package claudecode is the Claude Code model provider: each turn runs
// `claude -p` (the CLI from the npm package @anthropic-ai/claude-code) on the
// operator's Claude plan, with Claude Code's own tools off, and the host's
// tools reach it through a bridge, so every tool call runs in the host
// exactly as with the OpenAI provider.
//
// # The turn
//
// [Provider.Complete] starts one claude process per turn (one at a time per
// login: concurrent ones race on the login's token refresh, so turns of
// different chats queue). Claude runs the model's tool loop itself; the
// host's tools are offered to it as the tools of one stdio MCP server, the
// bridge, a hidden sub-command of the bot's own binary ([RunBridge]) that
// claude starts from the per-turn MCP config file. The bridge connects
// back to the bot over a Unix socket in the agent dir and proves itself with
// a per-turn secret read from that file (mode 0600, in the provider home);
// each call it forwards runs through [agent.RunBridgedCall]: the tool_call
// handlers (approvals), the spawn policy and the sandbox, redaction of the
// result before it goes back to claude (claude is the model's side of the
// egress boundary), the events and the transcript. A connection with a
// wrong secret, or the secret of a turn that has ended, gets nothing.
//
// # The flags, checked against claude 2.1.197
//
//   - -p with --input-format stream-json, --output-format stream-json and
//     --verbose (stream-json output requires it) and --include-partial-messages
//     (stream_event text deltas, streamed into the draft). The prompt goes
//     in on stdin as one user message, so nothing of it is in argv.
//   - --session-id for the first turn of a chat session, --resume after it;
//     the mapping from the host's session to claude's is kept in
//     sessions.json in the provider home, so it survives a restart. A
//     --resume that claude answers with "No conversation found" starts a
//     fresh session and the answer says so.
//   - --model from /model (when set), --append-system-prompt-file with the
//     host's system prompt (a file: the prompt holds SYSTEM.md and AGENTS.md
//     and could pass the kernel's 128 KiB limit on one argument).
//   - --strict-mcp-config --mcp-config <file>: the bridge is the only MCP
//     server. --tools "" turns every built-in tool off (--disallowedTools
//     would be a deny-list, which a new native tool would pass);
//     --allowedTools lists exactly the bridge's tools, and --permission-mode
//     dontAsk denies anything else without asking.
//   - --setting-sources "" loads no user, project or local settings: the
//     workspace is the agent's, and its .claude/settings.json could hold a
//     hook that claude would run outside the sandbox with the login token
//     in its environment, and its CLAUDE.md would be read into the prompt.
//     Without the flag the real CLI does both (TestRealCLI plants them).
//     --disable-slash-commands turns skills and slash commands off.
//   - Not chosen: --bare (it reads only ANTHROPIC_API_KEY, never the plan's
//     login), --dangerously-skip-permissions (dontAsk with an allow-list is
//     the narrower grant), --no-session-persistence (resume needs the
//     session on disk).
//
// # Fail closed
//
// The turn is aborted, and claude's process group killed, unless claude's
// system/init event lists exactly the bridge's tools, shows the bridge
// connected and reports apiKeySource "none" (with -p an API key would
// silently bill the key instead of the plan). Nothing of the model's (a
// text delta, an assistant message) passes before that event was checked,
// and a bridge call that comes first waits for the check.
//
// # The environment
//
// Claude gets an environment built from an allow-list ([Environ]), never
// the host's: HOME and CLAUDE_CONFIG_DIR in the provider home (under the
// agent dir, which agent processes cannot read), PATH, USER, LANG, LC_*,
// the temp and proxy variables, NODE_EXTRA_CA_CERTS, the session's TZ, the
// login token CLAUDE_CODE_OAUTH_TOKEN when the operator set one, and
// DISABLE_AUTOUPDATER=1 (the installed CLI is root-owned and pinned).
// These are provider processes, not agent processes: they do not go through
// the spawn policy, whose hooks could add variables to them.
package claudecode

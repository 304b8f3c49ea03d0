package main

import (
	"context"
	"errors"
	"strings"

	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/claudecode"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// doctorClaude reports the model provider; for claude-code it runs
// `claude --version` and `claude auth status` as provider processes and
// lists the tools the bridge serves.
func doctorClaude(ctx context.Context, r *report, cfg Config, environ func() map[string]string) {
	r.line("\nModel provider")
	if !cfg.Claude.Enabled {
		r.line("  openai: %s (MODEL_PROVIDER=openai)", hostOf(cfg.OpenAIBaseURL))
		return
	}
	home := claudeHome(cfg)
	r.line("  claude-code: claude -p on your Claude plan, provider home %s", home)
	if cfg.Sandbox.Mode == sandbox.Off {
		r.warn("%s", claudeUnsandboxedWarning)
	}
	st, err := claudecode.Probe(ctx, "", home, environ(), cfg.Claude.OAuthToken)
	switch {
	case errors.Is(err, claudecode.ErrCLIMissing):
		r.problem("%v", err)
		return
	case err != nil:
		r.problem("%v", err)
	}
	if st.Version != "" {
		if claudecode.OlderThan(st.Version, claudecode.TestedVersion) {
			r.warn("claude %s is older than %s, the version the bot was checked against: a turn may fail as CLI too old", st.Version, claudecode.TestedVersion)
		} else {
			r.line("  claude %s", st.Version)
		}
	}
	switch {
	case err != nil:
	case st.LoggedIn && cfg.Claude.OAuthToken != "":
		r.line("  login: CLAUDE_CODE_OAUTH_TOKEN (%s)", st.AuthMethod)
	case st.LoggedIn:
		r.line("  login: logged in (%s)", st.AuthMethod)
	default:
		r.problem("Claude Code is not logged in: run `telegram-bot claude-login` in the bot's terminal, or set CLAUDE_CODE_OAUTH_TOKEN from `claude setup-token`")
	}
	var names []string
	for _, t := range tools.All() {
		names = append(names, "mcp__host__"+t.Spec().Name)
	}
	r.line("  bridge tools (claude's only tools): %s, mcp__host__send_file, the scheduler's and each MCP server's tools as mcp__host__<name>", strings.Join(names, ", "))
}

package main

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/volcanic/telegram-agent/internal/chat"
	"github.com/volcanic/telegram-agent/internal/claudecode"
	usagelog "github.com/volcanic/telegram-agent/internal/usage"
)

// Model providers MODEL_PROVIDER selects.
const (
	providerOpenAI     = "openai"
	providerClaudeCode = "claude-code"
)

// claudeDefaultModel is the model of new chats with MODEL_PROVIDER=claude-code
// when OPENAI_MODEL is not set: claude's alias for its current Sonnet.
const claudeDefaultModel = "sonnet"

// claudeContextWindow is the host's context window with claude-code: large
// enough that the host never compacts (see parseClaudeCode).
const claudeContextWindow = 1 << 30

// claudeSettings is MODEL_PROVIDER=claude-code's part of the configuration.
type claudeSettings struct {
	// Enabled is MODEL_PROVIDER=claude-code.
	Enabled bool
	// OAuthToken is CLAUDE_CODE_OAUTH_TOKEN (a host secret, for claude
	// alone).
	OAuthToken string
}

// parseClaudeCode reads MODEL_PROVIDER and CLAUDE_CODE_OAUTH_TOKEN into c.
// In claude-code mode it refuses the variables that would make claude bill
// an API key or another cloud instead of the plan (with -p an API key
// silently takes the place of the login), naming each and what to do
// instead, and gives new chats claude's default model unless OPENAI_MODEL
// names one.
func parseClaudeCode(e Env, environ map[string]string, c *Config) []error {
	c.Claude.OAuthToken = strings.TrimSpace(e.ClaudeOAuthToken)
	switch strings.ToLower(strings.TrimSpace(e.ModelProvider)) {
	case "", providerOpenAI: // "" is the default, as a caller that builds an Env itself leaves it
		return nil
	case providerClaudeCode:
		c.Claude.Enabled = true
	default:
		return []error{errors.New("MODEL_PROVIDER must be openai or claude-code")}
	}
	var errs []error
	for _, name := range claudecode.RefusedVariables {
		if strings.TrimSpace(environ[name]) != "" {
			errs = append(errs, fmt.Errorf("%s is set, but MODEL_PROVIDER=claude-code runs claude on your Claude plan's login, "+
				"and with it claude would bill an API key or another cloud instead: unset it, and log in with "+
				"`telegram-bot claude-login` or set CLAUDE_CODE_OAUTH_TOKEN (from `claude setup-token`); "+
				"for API billing use MODEL_PROVIDER=openai with an OpenAI-compatible endpoint", name))
		}
	}
	// claude compacts its own session, and its usage counts every request
	// of a turn, so the host's compaction would only ask claude for
	// summaries it does not need.
	c.ContextWindow = claudeContextWindow
	if _, set := environ["OPENAI_MODEL"]; !set || strings.TrimSpace(environ["OPENAI_MODEL"]) == "" {
		c.Model = claudeDefaultModel
		// OPENAI_MODELS was completed with the OpenAI default; it gets
		// claude's instead.
		if c.Models = splitList(e.OpenAIModels); len(c.Models) > 0 && !slices.Contains(c.Models, c.Model) {
			c.Models = append([]string{c.Model}, c.Models...)
		}
	}
	return errs
}

// claudeUnsandboxedWarning is logged when claude-code runs without the
// agent sandbox: the login then rests on the file modes alone.
const claudeUnsandboxedWarning = "claude-code: the agent sandbox is off, so agent processes running as the bot's user can read Claude Code's login in the agent dir and claude's environment; turn AGENT_SANDBOX on"

// claudeHome is the provider home: claude's HOME and CLAUDE_CONFIG_DIR,
// in the agent dir, which agent processes cannot read.
func claudeHome(cfg Config) string { return filepath.Join(cfg.AgentDir, "claude-code") }

// claudeSocket is the bridge's Unix socket, in the agent dir.
func claudeSocket(cfg Config) string { return filepath.Join(cfg.AgentDir, "claude-bridge.sock") }

// claudeBridge is the command line claude starts the bridge with: this
// binary in its hidden bridge mode.
func claudeBridge() ([]string, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("claude-code: the bot's own executable: %w", err)
	}
	return []string{exe, claudecode.BridgeCommand}, nil
}

// newClaudeProvider is the Claude Code provider of cfg. environ is the
// host environment claude's allow-list reads (nil: the real one).
func newClaudeProvider(cfg Config, environ func() map[string]string, logger *slog.Logger) (*claudecode.Provider, error) {
	bridge, err := claudeBridge()
	if err != nil {
		return nil, err
	}
	if environ == nil {
		environ = environMap
	}
	return claudecode.New(claudecode.Config{Home: claudeHome(cfg), Socket: claudeSocket(cfg), Bridge: bridge,
		Workspace: cfg.WorkspaceDir, Environ: environ, OAuthToken: cfg.Claude.OAuthToken, Logger: logger})
}

// planWindows reports p's plan windows for /usage.
func planWindows(p *claudecode.Provider, logged func() []usagelog.Window) func() []chat.PlanWindow {
	return func() []chat.PlanWindow {
		var out []chat.PlanWindow
		for _, r := range p.RateLimits() {
			out = append(out, chat.PlanWindow{Name: r.Type, Status: r.Status, Utilization: r.Utilization, Resets: r.Resets()})
		}
		if len(out) > 0 {
			return out
		}
		// Before claude's first turn since the start: what the usage log
		// kept of the last report.
		for _, w := range logged() {
			out = append(out, chat.PlanWindow{Name: w.Name, Status: w.Status, Utilization: w.Utilization, Resets: w.Resets})
		}
		return out
	}
}

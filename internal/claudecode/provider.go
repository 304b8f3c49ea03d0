package claudecode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// defaultTurnTimeout bounds a turn when Config.TurnTimeout is zero.
const defaultTurnTimeout = 30 * time.Minute

// freshNotice begins the answer of a turn whose claude session was lost.
const freshNotice = "(Claude Code no longer had this conversation, so it starts fresh: it does not remember the earlier messages.)\n\n"

// Config is the provider's setup, filled by the bot's main.
type Config struct {
	// Command is the claude executable; empty means "claude" on the PATH
	// of Environ.
	Command string
	// Home is the provider home: claude's HOME and, in it, its
	// CLAUDE_CONFIG_DIR, the per-turn MCP config files and sessions.json.
	// It must be a directory agent processes cannot read (under the agent
	// dir).
	Home string
	// Socket is the path of the bridge's Unix socket (in the agent dir).
	Socket string
	// Bridge is the command line claude starts the bridge with: the bot's
	// own executable and [BridgeCommand]; the MCP config file's path is
	// appended.
	Bridge []string
	// Workspace is claude's working directory.
	Workspace string
	// Environ is the host's environment, read for the allow-list
	// ([Environ]); nil means the process environment.
	Environ func() map[string]string
	// OAuthToken is CLAUDE_CODE_OAUTH_TOKEN, a host secret handed to claude
	// alone (empty: claude uses the login in its config dir).
	OAuthToken string
	// TurnTimeout bounds one turn (zero: 30 minutes).
	TurnTimeout time.Duration
	Logger      *slog.Logger

	// extraEnv is added to claude's environment: a test-only seam (see
	// export_test.go), never an operator's setting.
	extraEnv map[string]string
}

// Provider is the Claude Code [agent.Provider].
type Provider struct {
	cfg      Config
	logger   *slog.Logger
	bridge   *bridgeServer
	sessions *sessionStore
	// slot is held by the one claude process a login may run at a time.
	slot chan struct{}

	mu     sync.Mutex
	limits map[string]RateLimit
	// leftOut are the tools the bridge left out and a warning named.
	leftOut map[string]bool
}

// New creates the provider home (mode 0700) and starts listening on the
// bridge socket; Close stops it.
func New(cfg Config) (*Provider, error) {
	if cfg.Home == "" || cfg.Socket == "" || len(cfg.Bridge) == 0 {
		return nil, errors.New("claudecode: the provider needs a home, a socket and a bridge command")
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.TurnTimeout <= 0 {
		cfg.TurnTimeout = defaultTurnTimeout
	}
	if cfg.Environ == nil {
		cfg.Environ = processEnviron
	}
	if err := os.MkdirAll(ConfigDir(cfg.Home), 0o700); err != nil {
		return nil, fmt.Errorf("claudecode: provider home: %w", err)
	}
	if err := os.Chmod(cfg.Home, 0o700); err != nil {
		return nil, fmt.Errorf("claudecode: provider home: %w", err)
	}
	// A run's files outlive it only when the bot was killed during the run;
	// their secret is dead with it, but they are not left lying around.
	for _, pattern := range []string{"mcp-*.json", "system-*.md"} {
		stale, _ := filepath.Glob(filepath.Join(cfg.Home, pattern))
		for _, path := range stale {
			_ = os.Remove(path)
		}
	}
	sessions, err := openSessions(filepath.Join(cfg.Home, "sessions.json"))
	if err != nil {
		return nil, err
	}
	bridge, err := listenBridge(cfg.Socket, cfg.Logger)
	if err != nil {
		return nil, err
	}
	return &Provider{cfg: cfg, logger: cfg.Logger, bridge: bridge, sessions: sessions,
		slot: make(chan struct{}, 1), limits: map[string]RateLimit{}, leftOut: map[string]bool{}}, nil
}

// Close stops the bridge socket.
func (p *Provider) Close() error { return p.bridge.close() }

// RateLimits returns the plan's usage windows as claude last reported
// them, by window name.
func (p *Provider) RateLimits() map[string]RateLimit {
	p.mu.Lock()
	defer p.mu.Unlock()
	return maps.Clone(p.limits)
}

// rateLimit remembers a reported window, and logs it when its status or
// reset time changed.
func (p *Provider) rateLimit(r RateLimit) {
	p.mu.Lock()
	old, seen := p.limits[r.Type]
	p.limits[r.Type] = r
	p.mu.Unlock()
	if !seen || old.Status != r.Status || old.ResetsAt != r.ResetsAt {
		p.logger.Info("claudecode: the plan's usage window", "window", r.Type, "status", r.Status,
			"resets", r.Resets(), "utilization", r.Utilization)
	}
}

// Complete runs one turn of claude. A request with tools is a turn of
// the session ctx belongs to: its new user messages go to claude's session
// for it, and the tools claude calls through the bridge run in that
// session. A request without tools (a summary) runs once, without a
// session. Only one claude runs at a time; others wait.
func (p *Provider) Complete(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
	select {
	case p.slot <- struct{}{}:
	case <-ctx.Done():
		return agent.Response{}, ctx.Err()
	}
	defer func() { <-p.slot }()
	ctx, cancel := context.WithTimeoutCause(ctx, p.cfg.TurnTimeout, ErrTurnTimeout)
	defer cancel()

	req.Tools = p.bridgeable(req.Tools)
	s := agent.TurnSession(ctx)
	if len(req.Tools) == 0 || s == nil {
		return p.run(ctx, turnSpec{req: req, prompt: summaryPrompt(req.Messages), tz: zoneOf(s)}, onText)
	}
	spec := turnSpec{req: req, prompt: newUserContent(req.Messages), tz: s.TimeZone(), persist: true}
	spec.session = p.sessions.get(s.ID())
	spec.resume = spec.session.Started
	resp, err := p.run(ctx, spec, onText)
	switch {
	case errors.Is(err, errNoConversation):
		p.logger.Info("claudecode: claude no longer has the session; starting a fresh one", "session", s.ID())
		onText(freshNotice)
		spec.session, spec.resume = sessionEntry{UUID: newUUID()}, false
		resp, err = p.run(ctx, spec, onText)
		resp.Text = freshNotice + resp.Text
	case errors.Is(err, errSessionInUse):
		spec.resume = true
		resp, err = p.run(ctx, spec, onText)
	}
	if err != nil {
		return resp, err
	}
	if serr := p.sessions.started(s.ID(), spec.session); serr != nil {
		p.logger.Error("claudecode: the session map cannot be saved; the next turn may start a fresh session", "err", serr)
	}
	return resp, nil
}

// maxToolName is the longest tool name the Messages API takes.
const maxToolName = 64

// bridgeable returns the tools the bridge can offer: a tool whose bridged
// name (mcp__host__<name>) would be longer than the API takes, or hold a
// character it refuses, is left out with a warning, since claude would
// change or drop it and every turn would then fail the init check. Each
// such tool is named once.
func (p *Provider) bridgeable(tools []agent.ToolSpec) []agent.ToolSpec {
	out := make([]agent.ToolSpec, 0, len(tools))
	for _, t := range tools {
		name := toolPrefix + t.Name
		if len(name) > maxToolName || strings.ContainsFunc(name, func(r rune) bool {
			return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-')
		}) {
			p.mu.Lock()
			warned := p.leftOut[t.Name]
			p.leftOut[t.Name] = true
			p.mu.Unlock()
			if !warned {
				p.logger.Warn("claudecode: a tool's name is too long or odd for Claude Code; the bridge leaves it out", "tool", t.Name)
			}
			continue
		}
		out = append(out, t)
	}
	return out
}

// zoneOf is s's time zone, or none.
func zoneOf(s *agent.Session) string {
	if s == nil {
		return ""
	}
	return s.TimeZone()
}

// newUserContent is what the turn adds to claude's session: the messages
// after the last assistant message (the new user message, and those a
// failed turn left without an answer).
func newUserContent(msgs []agent.Message) []agent.Content {
	start := 0
	for i, m := range msgs {
		if m.Role == agent.RoleAssistant || m.Role == agent.RoleTool {
			start = i + 1
		}
	}
	var out []agent.Content
	for _, m := range msgs[start:] {
		if m.Role == agent.RoleUser {
			out = append(out, m.Content...)
		}
	}
	return out
}

// summaryPrompt renders a conversation as one text for a request without
// tools (a summary the host asks for).
func summaryPrompt(msgs []agent.Message) []agent.Content {
	text := ""
	for _, m := range msgs {
		for _, c := range m.Content {
			if c.Type == agent.TextContent {
				text += string(m.Role) + ": " + c.Text + "\n\n"
			}
		}
	}
	return []agent.Content{agent.Text(text)}
}

// processEnviron is the process environment as a map.
func processEnviron() map[string]string {
	env := map[string]string{}
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	return env
}

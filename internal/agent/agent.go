package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"

	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
	"github.com/volcanic/telegram-agent/internal/storagefail"
)

// ProcessPreparer turns a spawn request into the complete child context: the
// spawn policy with its host hooks. [*spawnpolicy.Policy] satisfies it.
type ProcessPreparer interface {
	Prepare(req spawnpolicy.Request) (spawnpolicy.Context, error)
}

// Agent holds what every session shares: the model provider, the spawn
// policy, the redactor, the tools and the extensions. Build it with [New],
// activate the extensions with [Agent.Start], then open sessions.
type Agent struct {
	provider Provider
	policy   ProcessPreparer
	red      *redactor.Redactor
	cfg      config
	logger   *slog.Logger

	// apis are the extensions' APIs in load order, written only by Start
	// and read-only afterwards; tools and toolIndex are the host tools
	// then the extensions' tools, under toolsMu: an extension may add a
	// tool later (API.AddTool).
	apis      []*API
	toolsMu   sync.RWMutex
	tools     []*registeredTool
	toolIndex map[string]*registeredTool

	// openTranscript reads a session's transcript (a seam for tests).
	openTranscript func(path string, logger *slog.Logger) (*transcript, []Message, error)
	// transcripts is the episode of transcript writes that fail.
	transcripts *storagefail.Episode

	mu      sync.Mutex
	started bool
	closed  bool
	// sessions are the open sessions; opening holds, for each id being
	// opened, a channel closed once that open is over.
	sessions map[string]*Session
	opening  map[string]chan struct{}
}

// registeredTool is a tool with its parsed schema and the extension that
// registered it ("" for a host tool).
type registeredTool struct {
	tool   Tool
	spec   ToolSpec
	schema *argumentSchema
	origin string
}

// New builds an agent over a provider, a spawn policy and a redactor (nil
// means one that redacts nothing). It checks the host tools' names and
// schemas; extensions are activated later, by Start.
func New(provider Provider, policy ProcessPreparer, red *redactor.Redactor, opts ...Option) (*Agent, error) {
	if provider == nil {
		return nil, errors.New("agent: provider is nil")
	}
	if policy == nil {
		return nil, errors.New("agent: process preparer is nil")
	}
	if red == nil {
		red = redactor.New(nil)
	}
	cfg := config{
		maxSteps:   DefaultMaxSteps,
		logger:     slog.New(slog.DiscardHandler),
		abortGrace: defaultAbortGrace,
		keepTurns:  DefaultKeepTurns,
		// contextReserve -1 means "the default", resolved with the window.
		contextWindow:   DefaultContextWindow,
		contextReserve:  -1,
		transcriptQuiet: transcriptQuiet,
	}
	for _, opt := range opts {
		opt(&cfg)
	}
	if cfg.workspace == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, fmt.Errorf("agent: finding a default workspace: %w", err)
		}
		cfg.workspace = wd
	}
	if cfg.sessionDir != "" {
		if err := os.MkdirAll(cfg.sessionDir, 0o700); err != nil {
			return nil, fmt.Errorf("agent: creating the session dir: %w", err)
		}
	}
	a := &Agent{
		provider:  provider,
		policy:    policy,
		red:       red,
		cfg:       cfg,
		logger:    cfg.logger,
		toolIndex: make(map[string]*registeredTool),
		sessions:  make(map[string]*Session),
		opening:   make(map[string]chan struct{}),

		openTranscript: openTranscript,
	}
	a.transcripts = newTranscriptEpisode(a)
	for _, t := range cfg.tools {
		if err := a.addTool(t, ""); err != nil {
			return nil, err
		}
	}
	seen := make(map[string]bool)
	for i, ext := range cfg.extensions {
		if ext == nil {
			return nil, fmt.Errorf("agent: extension %d is nil", i)
		}
		name := ext.Name()
		if name == "" || seen[name] {
			return nil, fmt.Errorf("agent: extension %d has an empty or duplicate name %q", i, name)
		}
		seen[name] = true
	}
	return a, nil
}

// addTool registers t for origin, checking its name and schema, with every
// known secret redacted from its description and schema. A schema
// the loop cannot check calls against does not stop the agent: the tool is
// kept, its calls are checked only as JSON objects and a warning names it
// and says why; a tool whose schema is unusable is left out with a warning.
func (a *Agent) addTool(t Tool, origin string) error {
	if t == nil {
		return errors.New("agent: tool is nil")
	}
	a.toolsMu.Lock()
	defer a.toolsMu.Unlock()
	spec := t.Spec()
	if spec.Name == "" {
		return errors.New("agent: a tool has no name")
	}
	spec, ok := a.redactSpec(spec, origin)
	if !ok {
		return nil
	}
	if _, dup := a.toolIndex[spec.Name]; dup {
		return fmt.Errorf("agent: tool %q is registered twice", spec.Name)
	}
	sc, note, err := parseSchema(spec.Parameters)
	if err != nil {
		a.logger.Warn("agent: tool left out: its parameter schema is unusable",
			"tool", spec.Name, "origin", origin, "err", err)
		return nil
	}
	if note != "" {
		a.logger.Warn("agent: tool schema not checked; calls are checked only as JSON objects",
			"tool", spec.Name, "origin", origin, "why", note)
	}
	rt := &registeredTool{tool: t, spec: spec, schema: sc, origin: origin}
	a.tools = append(a.tools, rt)
	a.toolIndex[spec.Name] = rt
	return nil
}

// redactSpec returns spec with every known secret redacted from its
// description and its parameter schema (an MCP server describes its tools
// to the model on every request, and a server may hold a secret). The
// redactor's token holds no JSON-special character and it matches the
// JSON-escaped forms of the secrets, so a redacted schema stays valid JSON;
// if it is not (a secret written as a bare number), or the name itself holds
// a secret, the tool is left out with a warning and ok is false.
func (a *Agent) redactSpec(spec ToolSpec, origin string) (ToolSpec, bool) {
	if name := a.red.Redact(spec.Name); name != spec.Name {
		a.logger.Warn("agent: tool left out: its name holds a secret", "tool", name, "origin", origin)
		return spec, false
	}
	spec.Description = a.red.Redact(spec.Description)
	if len(spec.Parameters) > 0 {
		params := a.red.Redact(string(spec.Parameters))
		if params != string(spec.Parameters) {
			if !json.Valid([]byte(params)) {
				a.logger.Warn("agent: tool left out: its parameter schema holds a secret that cannot be redacted as JSON",
					"tool", spec.Name, "origin", origin)
				return spec, false
			}
			spec.Parameters = json.RawMessage(params)
		}
	}
	return spec, true
}

// Start activates the extensions in load order, handing each its [API]. An
// activation error stops start-up and is returned with the extension's
// name. Start may be called once; sessions can be opened only after it.
func (a *Agent) Start(ctx context.Context) error {
	a.mu.Lock()
	if a.started {
		a.mu.Unlock()
		return errors.New("agent: already started")
	}
	a.mu.Unlock()
	for _, ext := range a.cfg.extensions {
		api := &API{agent: a, name: ext.Name(), logger: a.logger.With("extension", ext.Name())}
		api.activating = true
		err := safeCall(func() error { return ext.Activate(ctx, api) })
		api.activating = false
		if err != nil {
			return fmt.Errorf("agent: activating extension %q: %w", ext.Name(), err)
		}
		for _, t := range api.tools {
			if err := a.addTool(t, api.name); err != nil {
				return fmt.Errorf("agent: extension %q: %w", ext.Name(), err)
			}
		}
		if err := errors.Join(api.errs...); err != nil {
			return fmt.Errorf("agent: extension %q: %w", ext.Name(), err)
		}
		a.apis = append(a.apis, api)
	}
	a.mu.Lock()
	a.started = true
	a.mu.Unlock()
	return nil
}

// Tools returns the specs of every tool the model is offered: the host
// tools, then the extensions' in load order.
func (a *Agent) Tools() []ToolSpec {
	a.toolsMu.RLock()
	defer a.toolsMu.RUnlock()
	out := make([]ToolSpec, 0, len(a.tools))
	for _, t := range a.tools {
		out = append(out, t.spec)
	}
	return out
}

// Redactor returns the redactor every tool result goes through.
func (a *Agent) Redactor() *redactor.Redactor { return a.red }

// Processes returns the process-wide spawn policy (host hooks only, no
// session and no extension events).
func (a *Agent) Processes() ProcessPreparer { return a.policy }

// Close closes every open session (firing the extensions' session-close
// handlers). The agent must not be used afterwards: opening a session then
// fails with [ErrAgentClosed].
func (a *Agent) Close() {
	a.mu.Lock()
	a.closed = true
	open := make([]*Session, 0, len(a.sessions))
	for _, s := range a.sessions {
		open = append(open, s)
	}
	a.mu.Unlock()
	for _, s := range open {
		s.Close()
	}
}

// safeCall runs f, turning a panic into an error.
func safeCall(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

// Package mcp lets the agent use the tools of MCP servers (Playwright,
// GitHub, filesystem, anything with a stdio server, and hosted servers over
// Streamable HTTP) through the official SDK, without giving them the host's
// secrets.
//
// Every server process gets its environment from the spawn policy: the
// inherited variables are filtered, and the variables the server's
// configuration names are passed on purpose, unfiltered.
// Discovery at activation starts each enabled server through the
// process-wide policy in a temporary directory, lists its tools and stops
// it. A session starts its own server process at the first call of one of
// its tools, through the session's PrepareProcess, and keeps it until the
// session closes, the server idles out or the agent shuts down. A
// Streamable HTTP server is no process: discovery and each session open a
// client session with it instead, sending the configured headers.
package mcp

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// extensionName is the extension's name. The processes it starts carry
// their server's name as Origin instead.
const extensionName = "mcp"

// errShutDown reports a call after Close.
var errShutDown = errors.New("the MCP extension is shut down")

// PlantableWarning says what a server's [ServerStatus.Plantable] means and
// what to do about it.
const PlantableWarning = "the server's command or script lies where the agent's processes write: the agent can replace it and run its code with the server's env; install it outside the workspace"

// ServerStatus is what doctor shows of one configured server.
type ServerStatus struct {
	// Name is the server's name in the configuration.
	Name string
	// Disabled servers were not discovered.
	Disabled bool
	// Tools is how many tools discovery registered for it.
	Tools int
	// Err says why discovery failed (redacted), nil when it did not.
	Err error
	// Plantable is the server's command or script when it lies where the
	// agent's processes write (see [WithAgentWritable]), so that the agent
	// could replace it; "" otherwise.
	Plantable string
}

// Extension is the MCP extension of the agent. Build it with New and pass
// it to agent.WithExtensions; call Close on shutdown.
type Extension struct {
	cfg    Config
	opts   options
	logger *slog.Logger
	red    *redactor.Redactor
	// transport carries the requests to every Streamable HTTP server.
	transport *http.Transport
	// background runs the ends of the links calls gave up on.
	background sync.WaitGroup

	mu       sync.Mutex
	statuses []ServerStatus
	// conns holds each session's connections, by session id then server
	// name.
	conns  map[string]map[string]*connection
	closed bool
}

var _ agent.Extension = (*Extension)(nil)

// New returns the extension for the servers cfg configures.
func New(cfg Config, opts ...Option) *Extension {
	o := options{
		discoveryTimeout: DefaultDiscoveryTimeout,
		idleTimeout:      DefaultIdleTimeout,
		stopGrace:        DefaultStopGrace,
		callTimeout:      DefaultCallTimeout,
		reconnectFirst:   DefaultReconnectFirst,
		reconnectMax:     DefaultReconnectMax,
		now:              time.Now,
	}
	for _, opt := range opts {
		opt(&o)
	}
	logger := o.logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	e := &Extension{
		cfg:    cfg,
		opts:   o,
		logger: logger,
		red:    redactor.New(nil),
		conns:  make(map[string]map[string]*connection),
		// Its own pool, closed with the extension; the proxy settings
		// are the bot's own environment's, as for every other request
		// the bot makes.
		transport: http.DefaultTransport.(*http.Transport).Clone(),
	}
	for _, sc := range cfg.Servers {
		e.statuses = append(e.statuses, ServerStatus{Name: sc.Name, Disabled: sc.Disabled, Plantable: plantable(sc, o.agentWritable)})
	}
	return e
}

// Name returns "mcp".
func (e *Extension) Name() string { return extensionName }

// Activate discovers every enabled server concurrently and registers its
// tools as mcp__<server>__<tool>. A server that fails or does not answer
// within the discovery timeout is logged with the tail of its stderr
// (redacted) and its tools are absent; activation still succeeds. It also
// subscribes to session close, to stop the session's servers.
func (e *Extension) Activate(ctx context.Context, api *agent.API) error {
	if e.opts.logger == nil {
		e.logger = api.Logger()
	}
	e.red = api.Redactor()
	var enabled []ServerConfig
	for i, sc := range e.cfg.Servers {
		if sc.Disabled {
			continue
		}
		enabled = append(enabled, sc)
		if what := e.statuses[i].Plantable; what != "" {
			e.logger.Warn("mcp: "+PlantableWarning, "server", sc.Name, "path", what)
		}
	}
	results := e.discoverAll(ctx, api.Processes(), enabled)
	var all []remoteTool
	for _, r := range results {
		for _, t := range r.tools {
			all = append(all, remoteTool{Server: r.server.Name, Tool: t.Name})
		}
	}
	names := toolNames(all)
	counts := make(map[string]int, len(results))
	errs := make(map[string]error, len(results))
	used := make(map[string]bool, len(all))
	for _, r := range results {
		if r.err != nil {
			errs[r.server.Name] = errors.New(e.redact(r.err))
			e.logger.Warn("mcp: server unavailable; its tools are absent", "server", r.server.Name, "err", errs[r.server.Name])
			continue
		}
		for _, t := range r.tools {
			name := names[remoteTool{Server: r.server.Name, Tool: t.Name}]
			if used[name] {
				e.logger.Warn("mcp: tool listed twice; keeping the first", "server", r.server.Name, "tool", t.Name)
				continue
			}
			tl, err := newTool(e, r.server, name, t)
			if err != nil {
				e.logger.Warn("mcp: tool skipped", "server", r.server.Name, "err", e.redact(err))
				continue
			}
			used[name] = true
			api.RegisterTool(tl)
			counts[r.server.Name]++
		}
		e.logger.Info("mcp: server discovered", "server", r.server.Name, "tools", counts[r.server.Name])
	}
	e.mu.Lock()
	for i := range e.statuses {
		e.statuses[i].Tools = counts[e.statuses[i].Name]
		e.statuses[i].Err = errs[e.statuses[i].Name]
	}
	e.mu.Unlock()
	api.OnSessionClose(e.closeSession)
	return nil
}

// Servers returns the status of every configured server, in name order, for
// the doctor command.
func (e *Extension) Servers() []ServerStatus {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.statuses)
}

// Close stops every session's servers. Later calls of MCP tools fail.
// It always returns nil; the error is there for io.Closer.
func (e *Extension) Close() error {
	e.mu.Lock()
	e.closed = true
	var conns []*connection
	for _, byServer := range e.conns {
		for _, c := range byServer {
			conns = append(conns, c)
		}
	}
	clear(e.conns)
	e.mu.Unlock()
	closeAll(conns)
	e.background.Wait()
	e.transport.CloseIdleConnections()
	return nil
}

// closeSession stops the servers of the session that closed (/new,
// shutdown).
func (e *Extension) closeSession(sessionID string) {
	e.mu.Lock()
	byServer := e.conns[sessionID]
	delete(e.conns, sessionID)
	e.mu.Unlock()
	conns := make([]*connection, 0, len(byServer))
	for _, c := range byServer {
		conns = append(conns, c)
	}
	closeAll(conns)
}

// connection returns the session's connection to sc, creating it (without
// starting the server) at first use.
func (e *Extension) connection(sessionID string, sc ServerConfig) (*connection, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, errShutDown
	}
	byServer := e.conns[sessionID]
	if byServer == nil {
		byServer = make(map[string]*connection)
		e.conns[sessionID] = byServer
	}
	c := byServer[sc.Name]
	if c == nil {
		c = &connection{ext: e, server: sc, sessionID: sessionID}
		byServer[sc.Name] = c
	}
	return c, nil
}

// inBackground runs f on its own goroutine, which Close waits for; once
// Close has begun, f runs at once instead.
func (e *Extension) inBackground(f func()) {
	e.mu.Lock()
	closed := e.closed
	if !closed {
		e.background.Add(1)
	}
	e.mu.Unlock()
	if closed {
		f()
		return
	}
	go func() {
		defer e.background.Done()
		f()
	}()
}

// processDeps returns what starting a server needs.
func (e *Extension) processDeps() processDeps {
	return processDeps{logger: e.logger, red: e.red, grace: e.opts.stopGrace}
}

// redact returns err's message with every known secret redacted.
func (e *Extension) redact(err error) string { return e.red.Redact(err.Error()) }

// closeAll closes conns concurrently and waits for them.
func closeAll(conns []*connection) {
	var wg sync.WaitGroup
	for _, c := range conns {
		wg.Go(c.close)
	}
	wg.Wait()
}

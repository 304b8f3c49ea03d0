// Package mcp lets the agent use the tools of MCP servers (Playwright,
// GitHub, filesystem, anything with a stdio server, and hosted servers over
// Streamable HTTP) through the official SDK, without giving them the host's
// secrets.
//
// Every server process gets its environment from the spawn policy: the
// inherited variables are filtered, and the variables the server's
// configuration names are passed on purpose, unfiltered.
// Discovery starts each enabled server through the process-wide policy in
// a temporary directory, lists its tools and stops it. It runs in the
// background from activation on, so that the bot answers at once: a
// server that fails is tried again with a growing back-off until it
// answers, and its tools join every session from its next turn on
// ([agent.API.AddTool]). A session starts its own server process at the
// first call of one of its tools, through the session's PrepareProcess,
// and keeps it until the session closes, the server idles out or the
// agent shuts down. A Streamable HTTP server is no process: discovery and
// each session open a client session with it instead, sending the
// configured headers.
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

// ServerStatus is what doctor, /status and the health check show of one
// configured server.
type ServerStatus struct {
	// Name is the server's name in the configuration.
	Name string
	// Disabled servers were not discovered.
	Disabled bool
	// State is how discovery stands: starting (the first attempt runs),
	// ready, or failed (and tried again at RetryAt). A disabled server's
	// is "".
	State ServerState
	// Attempts is how many discovery attempts have ended.
	Attempts int
	// RetryAt is when a failed server is tried again.
	RetryAt time.Time
	// Tools is how many tools discovery registered for it.
	Tools int
	// Err says why the last discovery attempt failed (redacted, with the
	// tail of the server's stderr), nil when it did not.
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

	// stop ends the discovery of every server (Close); watchers counts
	// the discovery goroutines, and firstRound those whose first attempt
	// has not ended.
	stop       context.CancelFunc
	stopCtx    context.Context
	watchers   sync.WaitGroup
	firstRound sync.WaitGroup
	// statusMu orders the calls of the status hook.
	statusMu sync.Mutex

	mu       sync.Mutex
	statuses []ServerStatus
	// named are the tools of the servers discovered so far, and used the
	// names they were registered under: a server that answers later gets
	// names that clash with none of these.
	named []remoteTool
	used  map[string]bool
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
		retryFirst:       DefaultRetryFirst,
		retryMax:         DefaultRetryMax,
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
		used:   make(map[string]bool),
		// Its own pool, closed with the extension; the proxy settings
		// are the bot's own environment's, as for every other request
		// the bot makes.
		transport: http.DefaultTransport.(*http.Transport).Clone(),
	}
	e.stopCtx, e.stop = context.WithCancel(context.Background())
	for _, sc := range cfg.Servers {
		st := ServerStatus{Name: sc.Name, Disabled: sc.Disabled, Plantable: plantable(sc, o.agentWritable)}
		if !sc.Disabled {
			st.State = StateStarting
		}
		e.statuses = append(e.statuses, st)
	}
	return e
}

// Name returns "mcp".
func (e *Extension) Name() string { return extensionName }

// Activate starts the discovery of every enabled server in the background
// and returns at once: each server's tools are registered as
// mcp__<server>__<tool> when it answers. A server that fails or does not
// answer within the discovery timeout is logged with the tail of its
// stderr (redacted) and tried again after a growing back-off; its tools
// are absent meanwhile. It also subscribes to session close, to stop the
// session's servers.
func (e *Extension) Activate(ctx context.Context, api *agent.API) error {
	if e.opts.logger == nil {
		e.logger = api.Logger()
	}
	e.red = api.Redactor()
	for i, sc := range e.cfg.Servers {
		if sc.Disabled {
			continue
		}
		if what := e.statuses[i].Plantable; what != "" {
			e.logger.Warn("mcp: "+PlantableWarning, "server", sc.Name, "path", what)
		}
		e.watchers.Add(1)
		e.firstRound.Add(1)
		go func() {
			defer e.watchers.Done()
			e.watch(e.stopCtx, api, i, sc)
		}()
	}
	e.statusChanged()
	api.OnSessionClose(e.closeSession)
	return nil
}

// FirstRound waits until every enabled server's first discovery attempt
// has ended (ready or failed), or ctx ends, for the doctor and tests:
// the bot itself never waits.
func (e *Extension) FirstRound(ctx context.Context) error {
	done := make(chan struct{})
	go func() {
		e.firstRound.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
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
	e.stop()
	e.watchers.Wait()
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

package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/sandbox"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// exitWait is how long a failed call waits to learn whether the server
// exited under it, to say so in the error.
const exitWait = time.Second

// errClosed reports a call on a connection that was closed for good (the
// session ended, or the agent is shutting down).
var errClosed = errors.New("the MCP connection is closed")

// errCallTimeout is the cause of a call that ran out of time.
var errCallTimeout = errors.New("the MCP call timed out")

// errSessionGone reports a call a Streamable HTTP server refused because it
// no longer knows the session (it restarted, or expired the session): it
// never ran, so it may be sent again in a new session.
var errSessionGone = errors.New("the server no longer knows the session")

// link is a live client session with one server: a process over stdio
// (serverProcess) or a Streamable HTTP endpoint (remoteSession).
type link interface {
	// client returns the client session.
	client() *mcp.ClientSession
	// alive reports whether the session is still open.
	alive() bool
	// broken reports, after a call failed with err, whether the link is
	// unusable, and why; nil means it may be used again.
	broken(err error) error
	// exitError describes how a link that is no longer alive ended.
	exitError() error
	// stop ends the link gracefully; kill at once. Both are idempotent.
	stop()
	kill()
}

// connection is one server kept for one session: started (or connected to) at the first call of one
// of its tools, restarted (reconnected) when it died, stopped after the
// idle timeout, when the session closes and on shutdown.
type connection struct {
	ext       *Extension
	server    ServerConfig
	sessionID string

	mu     sync.Mutex
	link   link
	busy   int
	idle   *time.Timer
	closed bool
	// failures counts the attempts to connect to a Streamable HTTP server
	// that failed in a row; retryAt is when the next one may be made and
	// lastErr says why the last one failed.
	failures int
	retryAt  time.Time
	lastErr  error
}

// call runs the server's tool name with args for the session tc belongs to,
// starting the server (or connecting to it) when needed. A server that
// does not answer within the call timeout is killed (disconnected), and the
// next call starts it again. A call a Streamable HTTP server refused
// because it forgot the session is sent once more in a new session.
func (c *connection) call(ctx context.Context, tc *agent.ToolContext, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	res, err := c.callOnce(ctx, tc, name, args)
	if errors.Is(err, errSessionGone) {
		c.ext.logger.Info("mcp: the server no longer knows the session; calling again in a new one",
			"server", c.server.Name, "session", c.sessionID)
		res, err = c.callOnce(ctx, tc, name, args)
	}
	return res, err
}

// callOnce is one attempt of call.
func (c *connection) callOnce(ctx context.Context, tc *agent.ToolContext, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	l, err := c.acquire(ctx, tc)
	if err != nil {
		return nil, err
	}
	defer c.release()
	callCtx, cancel := context.WithTimeoutCause(ctx, c.ext.opts.callTimeout, errCallTimeout)
	defer cancel()
	res, err := l.client().CallTool(callCtx, &mcp.CallToolParams{Name: name, Arguments: args})
	if c.server.Remote() {
		err = hideURL(err, c.server.URL)
	}
	switch {
	case err == nil:
		return res, nil
	case ctx.Err() != nil:
		return nil, err
	case errors.Is(context.Cause(callCtx), errCallTimeout):
		c.kill(l)
		if c.server.Remote() {
			return nil, fmt.Errorf("the server did not answer within %s; the connection was closed and the next call opens a new one", c.ext.opts.callTimeout)
		}
		return nil, fmt.Errorf("the server did not answer within %s; it was stopped and starts again at the next call", c.ext.opts.callTimeout)
	case c.server.Remote() && errors.Is(err, mcp.ErrSessionMissing):
		c.drop(l)
		return nil, fmt.Errorf("%w: %w", errSessionGone, err)
	}
	why := l.broken(err)
	switch {
	case why == nil:
		return nil, err
	case c.server.Remote():
		c.drop(l)
		return nil, fmt.Errorf("%w; the next call connects again", why)
	}
	// A process that exited stays the link: the next acquire logs how it
	// ended and starts it again.
	return nil, why
}

// kill stops l, which stopped answering, at once (a process's whole
// group), so the next call starts the server again.
func (c *connection) kill(l link) {
	c.forget(l)
	c.ext.logger.Warn("mcp: a server did not answer a call in time; stopped it", "server", c.server.Name,
		"session", c.sessionID, "timeout", c.ext.opts.callTimeout)
	c.discard(l.kill)
}

// drop stops l, which is broken, so the next call starts (connects to) the
// server again.
func (c *connection) drop(l link) {
	c.forget(l)
	c.discard(l.stop)
}

// discard runs stop, which ends a link that is no longer c's. Ending a
// Streamable HTTP session asks the server to forget it, a request the SDK
// bounds at a few seconds that a server that stopped answering may take in
// full: it runs in the background (Extension.Close waits for it) so that
// the call that gave up is not delayed.
func (c *connection) discard(stop func()) {
	if c.server.Remote() {
		c.ext.inBackground(stop)
		return
	}
	stop()
}

// forget detaches l from the connection, if it is still the current link.
func (c *connection) forget(l link) {
	c.mu.Lock()
	if c.link == l {
		c.link = nil
	}
	c.mu.Unlock()
}

// acquire returns the live link, starting the server (connecting to it)
// when there is none and restarting it when it died, and marks the
// connection busy until release. A server that could not be started or
// reached (a stdio server that died and fails to start again, too) is not
// tried again before its back-off has passed.
func (c *connection) acquire(ctx context.Context, tc *agent.ToolContext) (link, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errClosed
	}
	if c.idle != nil {
		c.idle.Stop()
	}
	if c.link != nil && !c.link.alive() {
		c.ext.logger.Info("mcp: server died; restarting it", "server", c.server.Name, "session", c.sessionID,
			"err", c.ext.redact(c.link.exitError()))
		c.link.stop()
		c.link = nil
	}
	if c.link == nil {
		if wait := c.retryAt.Sub(c.ext.opts.now()); c.failures > 0 && wait > 0 {
			return nil, fmt.Errorf("the server cannot be reached (%d attempt(s) in a row failed, the last: %w); it is tried again at a call made after %s; tell the user if it stays unreachable",
				c.failures, c.lastErr, wait.Round(time.Millisecond))
		}
		l, err := c.start(ctx, tc)
		if err != nil {
			if ctx.Err() == nil {
				return nil, c.backOff(err)
			}
			return nil, err
		}
		c.failures, c.lastErr = 0, nil
		c.link = l
	}
	c.busy++
	return c.link, nil
}

// backOff records a failed attempt to connect and returns the error for the
// call. The caller holds c.mu.
func (c *connection) backOff(err error) error {
	c.failures++
	c.lastErr = err
	// A Retry-After is waited whole (the rule of package backoff).
	delay := retryAfterOf(err)
	if delay <= 0 {
		delay = reconnectDelay(c.failures, c.ext.opts.reconnectFirst, c.ext.opts.reconnectMax)
	}
	c.retryAt = c.ext.opts.now().Add(delay)
	c.ext.logger.Warn("mcp: cannot connect to a server; backing off", "server", c.server.Name, "session", c.sessionID,
		"failures", c.failures, "retry_in", delay, "err", c.ext.redact(err))
	return fmt.Errorf("%w; it is tried again at a call made after %s; tell the user if it stays unreachable", err, delay)
}

// start starts the server for the session, bounded by the discovery
// timeout: a stdio server's process prepared for the session (scope,
// session, zone, the host hooks and the extensions' process_spawn
// handlers), or a connection to a Streamable HTTP server.
func (c *connection) start(ctx context.Context, tc *agent.ToolContext) (link, error) {
	if c.server.Remote() {
		startCtx, cancel := context.WithTimeout(ctx, c.ext.opts.discoveryTimeout)
		defer cancel()
		r, err := connectRemote(startCtx, c.server, c.ext.transport)
		if err != nil {
			return nil, timeoutError(startCtx, c.ext.opts.discoveryTimeout, err)
		}
		c.ext.logger.Debug("mcp: connected to a server", "server", c.server.Name, "session", c.sessionID)
		return r, nil
	}
	home := c.ext.opts.serverHome
	paths, err := serverPaths(c.server, home, sandbox.Paths{})
	if err != nil {
		return nil, err
	}
	pc, err := tc.PrepareProcess(ctx, spawnpolicy.Request{
		Purpose:      spawnpolicy.MCPServer,
		Command:      c.server.Command,
		Args:         c.server.Args,
		Cwd:          serverCwd(c.server, home),
		Env:          serverEnv(c.server, home),
		Origin:       c.server.Name,
		SandboxPaths: paths,
	})
	if err != nil {
		return nil, err
	}
	startCtx, cancel := context.WithTimeout(ctx, c.ext.opts.discoveryTimeout)
	defer cancel()
	p, err := startServer(startCtx, pc, c.server.Name, c.ext.processDeps())
	if err != nil {
		if errors.Is(startCtx.Err(), context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, fmt.Errorf("no answer within %s: %w", c.ext.opts.discoveryTimeout, err)
		}
		return nil, err
	}
	c.ext.logger.Debug("mcp: server started", "server", c.server.Name, "session", c.sessionID)
	return p, nil
}

// release ends a call and arms the idle timer once no call is running.
func (c *connection) release() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.busy--
	if c.busy > 0 || c.closed || c.link == nil || c.ext.opts.idleTimeout <= 0 {
		return
	}
	if c.idle == nil {
		c.idle = time.AfterFunc(c.ext.opts.idleTimeout, c.stopIdle)
	} else {
		c.idle.Reset(c.ext.opts.idleTimeout)
	}
}

// stopIdle stops the server after the idle timeout, unless a call started
// meanwhile. The next call starts it again.
func (c *connection) stopIdle() {
	c.mu.Lock()
	if c.busy > 0 || c.link == nil {
		c.mu.Unlock()
		return
	}
	l := c.link
	c.link = nil
	c.mu.Unlock()
	c.ext.logger.Debug("mcp: stopping an idle server", "server", c.server.Name, "session", c.sessionID)
	l.stop()
}

// close stops the server for good: later calls fail with errClosed.
func (c *connection) close() {
	c.mu.Lock()
	c.closed = true
	if c.idle != nil {
		c.idle.Stop()
	}
	l := c.link
	c.link = nil
	c.mu.Unlock()
	if l != nil {
		l.stop()
		c.ext.logger.Debug("mcp: server stopped", "server", c.server.Name, "session", c.sessionID)
	}
}

// isDone reports whether done is closed.
func isDone(done <-chan struct{}) bool {
	select {
	case <-done:
		return true
	default:
		return false
	}
}

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

// connection is one server kept for one session (spec §5,
// McpServerConnection): started at the first call of one of its tools,
// restarted once when it died, stopped after the idle timeout, when the
// session closes and on shutdown.
type connection struct {
	ext       *Extension
	server    ServerConfig
	sessionID string

	mu     sync.Mutex
	proc   *serverProcess
	busy   int
	idle   *time.Timer
	closed bool
}

// call runs the server's tool name with args for the session tc belongs to,
// starting (or restarting) the server when needed. A server that does not
// answer within the call timeout is killed, and the next call starts it
// again.
func (c *connection) call(ctx context.Context, tc *agent.ToolContext, name string, args json.RawMessage) (*mcp.CallToolResult, error) {
	p, err := c.acquire(ctx, tc)
	if err != nil {
		return nil, err
	}
	defer c.release()
	callCtx, cancel := context.WithTimeoutCause(ctx, c.ext.opts.callTimeout, errCallTimeout)
	defer cancel()
	res, err := p.cs.CallTool(callCtx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		if ctx.Err() == nil && errors.Is(context.Cause(callCtx), errCallTimeout) {
			c.kill(p)
			return nil, fmt.Errorf("the server did not answer within %s; it was stopped and starts again at the next call", c.ext.opts.callTimeout)
		}
		if ctx.Err() == nil && p.exited(exitWait) {
			return nil, p.exitError()
		}
		return nil, err
	}
	return res, nil
}

// kill stops p, which stopped answering, at once (its whole process group),
// so the next call starts the server again.
func (c *connection) kill(p *serverProcess) {
	c.mu.Lock()
	if c.proc == p {
		c.proc = nil
	}
	c.mu.Unlock()
	c.ext.logger.Warn("mcp: a server did not answer a call in time; killed it", "server", c.server.Name,
		"session", c.sessionID, "timeout", c.ext.opts.callTimeout)
	p.kill()
}

// acquire returns the running server, starting it through the session's
// PrepareProcess when there is none and restarting it once when it died,
// and marks the connection busy until release.
func (c *connection) acquire(ctx context.Context, tc *agent.ToolContext) (*serverProcess, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, errClosed
	}
	if c.idle != nil {
		c.idle.Stop()
	}
	if c.proc != nil && !c.proc.alive() {
		c.ext.logger.Info("mcp: server died; restarting it", "server", c.server.Name, "session", c.sessionID,
			"err", c.ext.redact(c.proc.exitError()))
		c.proc = nil
	}
	if c.proc == nil {
		p, err := c.start(ctx, tc)
		if err != nil {
			return nil, err
		}
		c.proc = p
	}
	c.busy++
	return c.proc, nil
}

// start prepares the server's process for the session (scope, session,
// zone, the host hooks and the extensions' process_spawn handlers) and
// starts it, bounded by the discovery timeout.
func (c *connection) start(ctx context.Context, tc *agent.ToolContext) (*serverProcess, error) {
	pc, err := tc.PrepareProcess(ctx, spawnpolicy.Request{
		Purpose: spawnpolicy.MCPServer,
		Command: c.server.Command,
		Args:    c.server.Args,
		Env:     explicitEnv(c.server.Env),
		Origin:  c.server.Name,
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
	if c.busy > 0 || c.closed || c.proc == nil || c.ext.opts.idleTimeout <= 0 {
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
	if c.busy > 0 || c.proc == nil {
		c.mu.Unlock()
		return
	}
	p := c.proc
	c.proc = nil
	c.mu.Unlock()
	c.ext.logger.Debug("mcp: stopping an idle server", "server", c.server.Name, "session", c.sessionID)
	p.stop()
}

// close stops the server for good: later calls fail with errClosed.
func (c *connection) close() {
	c.mu.Lock()
	c.closed = true
	if c.idle != nil {
		c.idle.Stop()
	}
	p := c.proc
	c.proc = nil
	c.mu.Unlock()
	if p != nil {
		p.stop()
		c.ext.logger.Debug("mcp: server stopped", "server", c.server.Name, "session", c.sessionID)
	}
}

package mcp

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/sandbox"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// discover starts one stdio server through the process-wide policy (only
// the host hooks run: no session exists yet), in a temporary working
// directory, lists its tools and stops it; a
// Streamable HTTP server is connected to instead; all within timeout.
func (e *Extension) discover(ctx context.Context, preparer agent.ProcessPreparer, sc ServerConfig, timeout time.Duration) ([]*mcp.Tool, error) {
	if sc.Remote() {
		return e.discoverRemote(ctx, sc, timeout)
	}
	dir, err := os.MkdirTemp(e.opts.tempDir, "mcp-discovery-*")
	if err != nil {
		return nil, fmt.Errorf("creating a working directory: %w", err)
	}
	defer func() {
		if err := os.RemoveAll(dir); err != nil {
			e.logger.Warn("mcp: removing the discovery directory", "server", sc.Name, "err", err)
		}
	}()
	// The discovery directory lies outside the workspace: the server may
	// use it, as it may its own paths.
	paths, err := serverPaths(sc, e.opts.serverHome, sandbox.Paths{Write: []string{dir}})
	if err != nil {
		return nil, err
	}
	pc, err := preparer.Prepare(spawnpolicy.Request{
		Purpose:      spawnpolicy.MCPServer,
		Command:      sc.Command,
		Args:         sc.Args,
		Cwd:          dir,
		Env:          serverEnv(sc, e.opts.serverHome),
		Origin:       sc.Name,
		SandboxPaths: paths,
	})
	if err != nil {
		// The spec: discovery fails with the hook's message.
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	p, err := startServer(ctx, pc, sc.Name, e.processDeps())
	if err != nil {
		return nil, timeoutError(ctx, timeout, err)
	}
	var tools []*mcp.Tool
	for t, err := range p.cs.Tools(ctx, nil) {
		if err != nil {
			p.stop()
			return nil, withStderr(timeoutError(ctx, timeout, fmt.Errorf("listing tools: %w", err)), p.stderr)
		}
		tools = append(tools, t)
	}
	p.stop()
	return tools, nil
}

// discoverRemote connects to a Streamable HTTP server, lists its tools and
// closes the session, all within timeout.
func (e *Extension) discoverRemote(ctx context.Context, sc ServerConfig, timeout time.Duration) ([]*mcp.Tool, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := connectRemote(ctx, sc, e.transport)
	if err != nil {
		return nil, timeoutError(ctx, timeout, err)
	}
	defer r.stop()
	var tools []*mcp.Tool
	for t, err := range r.cs.Tools(ctx, nil) {
		if err != nil {
			return nil, timeoutError(ctx, timeout, fmt.Errorf("listing tools: %w", hideURL(err, sc.URL)))
		}
		tools = append(tools, t)
	}
	return tools, nil
}

// timeoutError words an error caused by the timeout that bounds ctx.
func timeoutError(ctx context.Context, timeout time.Duration, err error) error {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %s: %w", timeout, err)
	}
	return err
}

// explicitEnv turns a server's env entries into the policy's explicit
// environment: set on purpose, after the filter, never filtered.
func explicitEnv(env map[string]string) map[string]*string {
	if len(env) == 0 {
		return nil
	}
	out := make(map[string]*string, len(env))
	for k, v := range env {
		out[k] = &v
	}
	return out
}

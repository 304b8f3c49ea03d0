package mcp

import (
	"context"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/backoff"
)

// ServerState is how the discovery of one server stands.
type ServerState string

// The states of a server's discovery.
const (
	// StateStarting: the first attempt runs.
	StateStarting ServerState = "starting"
	// StateReady: the server answered and its tools are registered.
	StateReady ServerState = "ready"
	// StateFailed: the last attempt failed; the server is tried again.
	StateFailed ServerState = "failed"
)

// watch discovers sc (the i-th configured server) until it answers or ctx
// ends: each failed attempt is logged, recorded in the server's status and
// followed by a back-off (a Retry-After the server sent is waited whole),
// and each attempt may take longer than the one before. Once the server
// answers, its tools are added to the agent.
func (e *Extension) watch(ctx context.Context, api *agent.API, i int, sc ServerConfig) {
	first := true
	defer func() {
		if first {
			e.firstRound.Done()
		}
	}()
	retry := backoff.Policy{Base: e.opts.retryFirst, Max: e.opts.retryMax, Jitter: 0.2}
	for attempt := 0; ; attempt++ {
		timeout := e.attemptTimeout(attempt)
		tools, err := e.discover(ctx, api.Processes(), sc, timeout)
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			n := e.register(api, sc, tools)
			e.logger.Info("mcp: server discovered", "server", sc.Name, "tools", n, "attempts", attempt+1)
			e.setStatus(i, func(st *ServerStatus) {
				st.State, st.Tools, st.Err, st.RetryAt, st.Attempts = StateReady, n, nil, time.Time{}, attempt+1
			})
			return
		}
		delay, _ := retry.Wait(ctx, attempt, retryAfterOf(err))
		redacted := errors.New(e.redact(err))
		e.logger.Warn("mcp: server unavailable; its tools are absent until it answers", "server", sc.Name,
			"attempt", attempt+1, "retry_in", delay, "err", redacted)
		e.setStatus(i, func(st *ServerStatus) {
			st.State, st.Err, st.RetryAt, st.Attempts = StateFailed, redacted, e.opts.now().Add(delay), attempt+1
		})
		if first {
			first = false
			e.firstRound.Done()
		}
		if !e.opts.clock.Sleep(ctx, delay) {
			return
		}
	}
}

// attemptTimeout is how long discovery attempt n (from 0) may take: the
// discovery timeout, doubled with every attempt up to
// DefaultDiscoveryTimeoutMax (or the discovery timeout, when it is longer).
func (e *Extension) attemptTimeout(n int) time.Duration {
	first := e.opts.discoveryTimeout
	_, hi := backoff.Policy{Base: first, Max: max(first, DefaultDiscoveryTimeoutMax)}.Bounds(n)
	return hi
}

// register adds the tools of sc to the agent under names that clash with
// none registered before, and returns how many it added.
func (e *Extension) register(api *agent.API, sc ServerConfig, tools []*mcp.Tool) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, t := range tools {
		e.named = append(e.named, remoteTool{Server: sc.Name, Tool: t.Name})
	}
	names := toolNames(e.named)
	n := 0
	for _, t := range tools {
		name := names[remoteTool{Server: sc.Name, Tool: t.Name}]
		if e.used[name] {
			e.logger.Warn("mcp: tool listed twice; keeping the first", "server", sc.Name, "tool", t.Name)
			continue
		}
		tl, err := newTool(e, sc, name, t)
		if err != nil {
			e.logger.Warn("mcp: tool skipped", "server", sc.Name, "err", e.redact(err))
			continue
		}
		if err := api.AddTool(tl); err != nil {
			e.logger.Warn("mcp: tool skipped", "server", sc.Name, "tool", name, "err", e.redact(err))
			continue
		}
		e.used[name] = true
		n++
	}
	return n
}

// setStatus changes the i-th server's status with f and tells the status
// hook.
func (e *Extension) setStatus(i int, f func(*ServerStatus)) {
	e.mu.Lock()
	f(&e.statuses[i])
	e.mu.Unlock()
	e.statusChanged()
}

// statusChanged hands the status hook every server's status, one call at
// a time, so that the last call has the latest.
func (e *Extension) statusChanged() {
	if e.opts.onStatus == nil {
		return
	}
	e.statusMu.Lock()
	defer e.statusMu.Unlock()
	e.opts.onStatus(e.Servers())
}

// retryAfterOf returns the wait a server asked for in err's chain (a
// Streamable HTTP server's Retry-After), 0 when none did.
func retryAfterOf(err error) time.Duration {
	var ra *retryAfterError
	if errors.As(err, &ra) {
		return ra.after
	}
	return 0
}

// retryAfterError is a failure of a Streamable HTTP server that asked,
// with Retry-After, how long to wait before the next try.
type retryAfterError struct {
	err   error
	after time.Duration
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }

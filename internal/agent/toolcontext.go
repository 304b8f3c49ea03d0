package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// ToolContext is the session a tool call or an extension handler runs in:
// its id, scope, time zone and workspace, and the only sanctioned way to
// start a process for it ([ToolContext.PrepareProcess], [ToolContext.Exec]).
type ToolContext struct {
	// SessionID and Scope identify the session.
	SessionID string
	Scope     string
	// TimeZone is the session's IANA zone id, empty when none resolves (the
	// children then inherit the host's TZ).
	TimeZone string
	// Workspace is the default working directory of the processes started
	// through this context.
	Workspace string

	session *Session
	// origin is the extension this context was handed to ("" for the host
	// and its tools).
	origin string
}

// Origin returns the name of the extension this context belongs to, or ""
// for a host tool.
func (c *ToolContext) Origin() string { return c.origin }

// WithOrigin returns a copy of c that belongs to the extension name, so the
// processes it starts carry that Origin.
func (c *ToolContext) WithOrigin(name string) *ToolContext {
	cp := *c
	cp.origin = name
	return &cp
}

// Redactor returns the agent's redactor, the one every result, progress
// report and error of this session goes through, or nil for a context that
// belongs to no session (a nil *redactor.Redactor redacts nothing). The
// loop still redacts every result whatever a tool does, but redaction of a
// finished result cannot undo a cut: a tool that cuts its output (keeping a
// head or a tail), reports it while it grows, or stores it (a file, a
// cache) should redact the stream first, with [redactor.Redactor.NewWriter]
// in front of its buffers, so a cut that falls inside a secret never leaves
// a part of it that no longer matches.
func (c *ToolContext) Redactor() *redactor.Redactor {
	if c == nil || c.session == nil {
		return nil
	}
	return c.session.agent.red
}

// PrepareProcess turns req into the complete child context for this
// session: it fills Scope and SessionID from the session, and TimeZoneID
// (unless req sets it), Cwd (the workspace) and Origin (the context's
// extension) when req leaves them empty; then it runs the spawn policy
// (filter, explicit env, host hooks) and finally every extension's
// ProcessSpawnEvent handlers, in load order. A handler error, or a handler
// that leaves the context without a command, a working directory or an
// environment, fails the spawn and is reported as an EventExtensionError.
// Handlers cannot change Purpose, Scope, SessionID or Origin. An error that
// refuses the spawn (the policy's, a hook's or a handler's) matches
// [ErrSpawnRefused] and holds the refusal's message only. PrepareProcess
// may be called from an OnEvent handler: the EventExtensionError of a
// refusal is then delivered right after the event being handled.
func (c *ToolContext) PrepareProcess(ctx context.Context, req spawnpolicy.Request) (spawnpolicy.Context, error) {
	if c == nil || c.session == nil {
		return spawnpolicy.Context{}, errors.New("agent: the tool context belongs to no session")
	}
	if err := ctx.Err(); err != nil {
		return spawnpolicy.Context{}, err
	}
	req.Scope = c.Scope
	req.SessionID = c.SessionID
	if req.TimeZoneID == "" {
		req.TimeZoneID = c.TimeZone
	}
	if req.Cwd == "" {
		req.Cwd = c.Workspace
	}
	if req.Origin == "" {
		req.Origin = c.origin
	}
	a := c.session.agent
	pc, err := a.policy.Prepare(req)
	if err != nil {
		return spawnpolicy.Context{}, refuseSpawn(err)
	}
	for _, api := range a.apis {
		for _, h := range api.processSpawn {
			ev := &ProcessSpawnEvent{Session: c.WithOrigin(api.name), Context: cloneSpawnContext(pc)}
			err := safeCall(func() error { return h(ctx, ev) })
			if err == nil {
				err = checkSpawnContext(ev.Context)
			}
			if err != nil {
				c.session.emitOrQueue(extensionError(c.SessionID, api.name, "process_spawn", err))
				return spawnpolicy.Context{}, refuseSpawn(fmt.Errorf("agent: extension %q process_spawn handler: %w", api.name, err))
			}
			pc = ev.Context.Restore(pc)
		}
	}
	return pc, nil
}

// checkSpawnContext rejects a context a handler left unusable.
func checkSpawnContext(sc spawnpolicy.Context) error {
	switch {
	case sc.Command == "":
		return errors.New("the spawn context has no command")
	case sc.Cwd == "":
		return errors.New("the spawn context has no working directory")
	case sc.Env == nil:
		return errors.New("the spawn context has no environment")
	}
	return nil
}

// cloneSpawnContext returns a deep copy of sc, so a handler that mutates
// its event cannot change what the previous step holds.
func cloneSpawnContext(sc spawnpolicy.Context) spawnpolicy.Context {
	sc.Args = slices.Clone(sc.Args)
	sc.Env = maps.Clone(sc.Env)
	return sc
}

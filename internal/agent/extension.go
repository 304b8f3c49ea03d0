package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"

	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// Extension is trusted in-process code that plugs into the agent: it
// registers tools and event handlers when it is activated. Extensions are
// registered with [WithExtensions]; that order is the load order.
type Extension interface {
	// Name identifies the extension in logs, extension errors and as the
	// Origin of the processes it starts. It must be unique.
	Name() string
	// Activate registers the extension's tools and handlers through api.
	// It runs once, from [Agent.Start]; an error stops start-up.
	Activate(ctx context.Context, api *API) error
}

// API is what one extension gets during activation. Its Register and On
// methods may be called only from Activate; after it, the agent's tools and
// handlers are fixed and later calls are ignored (and logged).
type API struct {
	agent      *Agent
	name       string
	logger     *slog.Logger
	activating bool
	errs       []error

	tools        []Tool
	toolCall     []func(ctx context.Context, ev *ToolCallEvent) error
	toolResult   []func(ctx context.Context, ev *ToolResultEvent) error
	processSpawn []func(ctx context.Context, ev *ProcessSpawnEvent) error
	events       []func(Event)
	sessionClose []func(sessionID string)
}

// Name returns the extension's name.
func (api *API) Name() string { return api.name }

// Logger returns the agent's logger with the extension's name attached.
func (api *API) Logger() *slog.Logger { return api.logger }

// Redactor returns the agent's redactor, for text an extension sends to the
// model outside a tool result (a watcher's output, say).
func (api *API) Redactor() *redactor.Redactor { return api.agent.red }

// Processes returns the process-wide spawn policy, for processes that belong
// to no session (catalogue discovery, scheduled scripts): only the host
// hooks run, no ProcessSpawnEvent. It works during activation.
func (api *API) Processes() ProcessPreparer { return api.agent.policy }

// registering reports whether registration is still open, logging the
// refused call otherwise.
func (api *API) registering(what string) bool {
	if api.activating {
		return true
	}
	api.logger.Error("agent: registration outside Activate ignored", "what", what)
	return false
}

// RegisterTool offers t to the model. Its name must be unique across the
// agent; a duplicate fails start-up.
func (api *API) RegisterTool(t Tool) {
	if api.registering("tool") {
		api.tools = append(api.tools, t)
	}
}

// OnToolCall adds a handler that sees every tool call before it runs, after
// its arguments were validated. It may change Arguments (they are validated
// again) or block the call. A handler error blocks the call too, and is
// reported as an EventExtensionError.
func (api *API) OnToolCall(h func(ctx context.Context, ev *ToolCallEvent) error) {
	if h != nil && api.registering("tool_call handler") {
		api.toolCall = append(api.toolCall, h)
	}
}

// OnToolResult adds a handler that sees every tool result, already
// redacted, and may replace it. The result is redacted again after the
// handlers. A handler error is reported as an EventExtensionError; the
// result stands.
func (api *API) OnToolResult(h func(ctx context.Context, ev *ToolResultEvent) error) {
	if h != nil && api.registering("tool_result handler") {
		api.toolResult = append(api.toolResult, h)
	}
}

// OnProcessSpawn adds a handler that sees the context of every process a
// session starts, after the host hooks, and may replace it. A handler error
// fails the spawn and is reported as an EventExtensionError.
func (api *API) OnProcessSpawn(h func(ctx context.Context, ev *ProcessSpawnEvent) error) {
	if h != nil && api.registering("process_spawn handler") {
		api.processSpawn = append(api.processSpawn, h)
	}
}

// OnEvent adds a handler that receives every event of every session, as
// the front end does. It runs synchronously on the turn's goroutine, so it
// must be quick. It may start processes (ToolContext.PrepareProcess and
// Exec; an extension error they raise is delivered right after the event
// being handled), but it must not call the session's Prompt or Close: they
// would wait for the turn that is waiting for the handler.
func (api *API) OnEvent(h func(Event)) {
	if h != nil && api.registering("event handler") {
		api.events = append(api.events, h)
	}
}

// OnSessionClose adds a handler called when a session closes
// ([Session.Close]: /new, shutdown), to release what the extension holds
// for it.
func (api *API) OnSessionClose(h func(sessionID string)) {
	if h != nil && api.registering("session close handler") {
		api.sessionClose = append(api.sessionClose, h)
	}
}

// ToolCallEvent is a tool call about to run ("tool_call").
type ToolCallEvent struct {
	// Context is the session the call runs in, as seen by the handler's
	// extension.
	Context  *ToolContext
	CallID   string
	ToolName string
	// Effects is what the tool declared of its calls' effects (its spec's
	// Effects): what a handler that judges calls reads, never the name.
	Effects Effects
	// Arguments may be replaced; they are validated again.
	Arguments json.RawMessage

	blocked bool
	reason  string
}

// Block refuses the call: reason becomes the tool's error result
// (redacted), and the tool does not run.
func (ev *ToolCallEvent) Block(reason string) {
	ev.blocked = true
	ev.reason = reason
}

// Blocked reports whether a handler blocked the call, and why.
func (ev *ToolCallEvent) Blocked() (reason string, blocked bool) { return ev.reason, ev.blocked }

// ToolResultEvent is a tool's result, already redacted ("tool_result").
type ToolResultEvent struct {
	Context   *ToolContext
	CallID    string
	ToolName  string
	Arguments json.RawMessage
	// Result may be replaced; it is redacted again after the handlers.
	Result Result
}

// ProcessSpawnEvent is the context of a process a session is about to start,
// after the host hooks ("process_spawn"). Handlers may replace Context but
// not its Purpose, Scope, SessionID or Origin, which are restored.
type ProcessSpawnEvent struct {
	Session *ToolContext
	Context spawnpolicy.Context
}

// extensionError builds the EventExtensionError for a handler failure.
func extensionError(sessionID, ext, what string, err error) Event {
	return Event{
		Kind:      EventExtensionError,
		SessionID: sessionID,
		Extension: ext,
		Err:       fmt.Errorf("extension %q %s handler: %w", ext, what, err),
	}
}

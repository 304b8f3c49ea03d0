package agent

import "encoding/json"

// EventKind says what an [Event] reports.
type EventKind int

// The events a session emits to its front end and to extensions.
const (
	// EventTurnStart: a turn began.
	EventTurnStart EventKind = iota + 1
	// EventTextDelta: Text holds the next piece of the model's answer,
	// redacted as a stream (see [Event]).
	EventTextDelta
	// EventToolStart: ToolCallID, ToolName and Arguments name a call that
	// is about to run.
	EventToolStart
	// EventToolUpdate: Result holds a redacted progress snapshot.
	EventToolUpdate
	// EventToolEnd: Result holds the redacted final result.
	EventToolEnd
	// EventError: Err says why the turn failed (its message redacted).
	EventError
	// EventExtensionError: Extension names the extension whose handler
	// failed, Err says how.
	EventExtensionError
	// EventTurnEnd: the turn is over (always the last event of a turn);
	// Text holds the final answer, Usage the last request's usage, Err the
	// redacted error when the turn failed.
	EventTurnEnd
	// EventCompaction: the session was compacted (before a request that
	// would not fit, or by [Session.Compact]); Text holds the redacted
	// summary that now stands for the earlier conversation.
	EventCompaction
	// EventStreamRestart: the model's answer stream was cut off and the
	// request is sent again; the text deltas since the request began are
	// void, and the answer streams anew.
	EventStreamRestart
	// EventModelFallback: the request's model was unavailable and Text
	// names the fallback model that answered.
	EventModelFallback
)

// String returns the kind's name, as logs print it.
func (k EventKind) String() string {
	switch k {
	case EventTurnStart:
		return "turn_start"
	case EventTextDelta:
		return "text_delta"
	case EventToolStart:
		return "tool_start"
	case EventToolUpdate:
		return "tool_update"
	case EventToolEnd:
		return "tool_end"
	case EventError:
		return "error"
	case EventExtensionError:
		return "extension_error"
	case EventTurnEnd:
		return "turn_end"
	case EventCompaction:
		return "compaction"
	case EventStreamRestart:
		return "stream_restart"
	case EventModelFallback:
		return "model_fallback"
	}
	return "unknown"
}

// Event is one thing that happened in a session. Which fields are set depends
// on Kind.
//
// Every event a session hands its front end and the extensions' handlers
// carries only redacted text, so a receiver may cut, render or store it
// without redacting it again. It is done here, before any cut, because a
// cut can leave part of a secret's encoded form that no later pass
// recognises.
//
// Text deltas pass the turn's streaming redactor. It holds back a trailing
// run that could still become a secret until the next delta settles it, so
// no delta ends in the beginning of one, and lets the run go at the end of
// each model step (and before a tool call a provider's own loop makes
// while it streams): the deltas of a step add up to its text redacted
// whole. Where deltas break is the redactor's choice, not the provider's.
//
// Every other Text (the final answer, a compaction summary, a fallback
// model's name), ToolCallID, ToolName, Arguments (as text and as the
// strings they decode to), Extension and Err are redacted whole. A Result
// was redacted where the tool's output became one; a progress snapshot's
// text leaves out a trailing run as a delta does.
type Event struct {
	Kind       EventKind
	SessionID  string
	Text       string
	ToolCallID string
	ToolName   string
	Arguments  json.RawMessage
	Result     *Result
	Err        error
	Extension  string
	Usage      Usage
}

package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"time"
)

// ErrNotInTurn is what [RunBridgedCall] returns for a context that belongs
// to no turn.
var ErrNotInTurn = errors.New("agent: the call belongs to no running turn")

// RunBridgedCall runs one tool call that a provider's own loop made while
// its Complete runs (Claude Code runs the model's tool loop itself and
// calls the host's tools through a bridge): ctx is the context Complete was
// given, or one derived from it. The call runs exactly as one the agent
// loop runs: the tool_call handlers (approvals), the tool through the spawn
// policy, redaction at every step, the tool_result handlers and the
// events. It is recorded as the loop records one, an assistant message
// holding text (what the model wrote before the call) and the call, then
// the result, so the history and the transcript stay a valid conversation.
// A call without an id gets a random one. The returned result is redacted.
// Calls of one turn are meant to come one at a time; the provider
// serializes them.
func RunBridgedCall(ctx context.Context, text string, call ToolCall) (Result, error) {
	m, _ := ctx.Value(turnKey{}).(*turnMark)
	if m == nil {
		return Result{}, ErrNotInTurn
	}
	s := m.session
	if call.ID == "" {
		var b [8]byte
		_, _ = rand.Read(b[:])
		call.ID = "bridged_" + hex.EncodeToString(b[:])
	}
	assistant := Message{Role: RoleAssistant, ToolCalls: []ToolCall{call}, Time: time.Now()}
	if text != "" {
		assistant.Content = []Content{Text(text)}
	}
	if err := s.record(assistant); err != nil {
		return ErrorResult(unrecordedText(err)), err
	}
	result := ErrorResult(abortedText)
	if ctx.Err() == nil {
		result = s.runTool(ctx, call)
	}
	msg := Message{
		Role: RoleTool, ToolCallID: call.ID, ToolName: call.Name,
		Content: result.Content, Details: result.Details, IsError: result.IsError, Time: time.Now(),
	}
	return result, s.recordResult(msg)
}

// TurnSession returns the session whose turn ctx belongs to (the context a
// provider's Complete is given), or nil: a provider that keeps a
// conversation of its own per session (Claude Code) keys it by the
// session's id.
func TurnSession(ctx context.Context) *Session {
	if m, _ := ctx.Value(turnKey{}).(*turnMark); m != nil {
		return m.session
	}
	return nil
}

package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"
)

// abortedText is the result of a tool call cut short by a cancelled turn.
const abortedText = "Operation aborted"

// defaultAbortGrace is how long a cancelled turn waits for a running tool.
const defaultAbortGrace = 5 * time.Second

// errToolTimeout is the cause of a tool call that ran out of time.
var errToolTimeout = errors.New("tool timed out")

// runTool runs one call and returns its result, redacted at every step:
// progress reports before their update events, the result (every
// error path included) before the tool_result handlers, and again after
// them, before the end event, the transcript and the next request.
func (s *Session) runTool(ctx context.Context, call ToolCall) Result {
	red := s.agent.red
	start := time.Now()
	if text := s.turnText(); text != nil {
		// A bridged call comes while the model's answer streams: the text
		// before it is a message of its own.
		text.flush()
	}
	s.emit(Event{Kind: EventToolStart, ToolCallID: call.ID, ToolName: call.Name, Arguments: json.RawMessage(call.Arguments)})
	tc, args, result := s.executeTool(ctx, call)
	result = redactResult(red, result)
	for _, api := range s.agent.apis {
		for _, h := range api.toolResult {
			ev := &ToolResultEvent{
				Context: tc.WithOrigin(api.name), CallID: call.ID, ToolName: call.Name,
				Arguments: cloneRaw(args), Result: cloneResult(result),
			}
			if err := safeCall(func() error { return h(ctx, ev) }); err != nil {
				s.emit(extensionError(s.id, api.name, "tool_result", err))
				continue
			}
			result = redactResult(red, ev.Result)
		}
	}
	result = redactResult(red, result)
	end := cloneResult(result)
	s.logToolCall(call, result, time.Since(start))
	s.emit(Event{Kind: EventToolEnd, ToolCallID: call.ID, ToolName: call.Name, Arguments: json.RawMessage(call.Arguments), Result: &end})
	return result
}

// executeTool looks the tool up, validates the arguments, runs the
// tool_call handlers and the tool. Its result is not redacted yet.
func (s *Session) executeTool(ctx context.Context, call ToolCall) (*ToolContext, json.RawMessage, Result) {
	rt, ok := s.agent.tool(call.Name)
	if !ok {
		return s.ToolContext(), json.RawMessage(call.Arguments), ErrorResult(fmt.Sprintf("Tool %q not found. Available tools: %s", call.Name, s.agent.toolNames()))
	}
	tc := s.ToolContext().WithOrigin(rt.origin)
	args, err := rt.schema.parseArguments(call.Arguments)
	if err != nil {
		return tc, json.RawMessage(call.Arguments), ErrorResult(fmt.Sprintf("Invalid arguments for tool %q: %v", call.Name, err))
	}
	for _, api := range s.agent.apis {
		for _, h := range api.toolCall {
			ev := &ToolCallEvent{Context: tc.WithOrigin(api.name), CallID: call.ID, ToolName: call.Name, Effects: rt.spec.Effects, Arguments: cloneRaw(args)}
			if err := safeCall(func() error { return h(ctx, ev) }); err != nil {
				s.emit(extensionError(s.id, api.name, "tool_call", err))
				return tc, args, ErrorResult(fmt.Sprintf("Tool call blocked: extension %q failed: %v", api.name, err))
			}
			if reason, blocked := ev.Blocked(); blocked {
				if reason == "" {
					reason = fmt.Sprintf("Tool call blocked by extension %q", api.name)
				}
				return tc, args, ErrorResult(reason)
			}
			if string(ev.Arguments) != string(args) {
				if args, err = rt.schema.parseArguments(string(ev.Arguments)); err != nil {
					return tc, ev.Arguments, ErrorResult(fmt.Sprintf("Invalid arguments for tool %q (after extension %q): %v", call.Name, api.name, err))
				}
			}
		}
	}
	return tc, args, s.invoke(ctx, rt, tc, call.ID, args)
}

// toolOutcome is what a tool's Execute returned (or its panic).
type toolOutcome struct {
	result Result
	err    error
}

// invoke runs the tool on its own goroutine, so a cancelled turn never
// waits for a tool that ignores its context longer than the abort grace.
// Progress reports are redacted and emitted until the call is over; later
// ones are dropped.
func (s *Session) invoke(ctx context.Context, rt *registeredTool, tc *ToolContext, callID string, args json.RawMessage) Result {
	callCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	if d := s.agent.cfg.toolTimeout; d > 0 {
		var cancelTimeout context.CancelFunc
		callCtx, cancelTimeout = context.WithTimeoutCause(callCtx, d, errToolTimeout)
		defer cancelTimeout()
	}
	var mu sync.Mutex
	finished := false
	progress := func(r Result) {
		mu.Lock()
		defer mu.Unlock()
		if finished {
			return
		}
		update := redactProgress(s.agent.red, r)
		s.emit(Event{Kind: EventToolUpdate, ToolCallID: callID, ToolName: rt.spec.Name, Result: &update})
	}
	done := make(chan toolOutcome, 1)
	go func() {
		var out toolOutcome
		defer func() {
			if r := recover(); r != nil {
				out = toolOutcome{err: fmt.Errorf("tool %q panicked: %v", rt.spec.Name, r)}
			}
			done <- out
		}()
		res, err := rt.tool.Execute(callCtx, &Call{ID: callID, Arguments: args, Context: tc, Progress: progress})
		out = toolOutcome{result: res, err: err}
	}()
	var out toolOutcome
	abandoned := false
	select {
	case out = <-done:
	case <-callCtx.Done():
		timer := time.NewTimer(s.agent.cfg.abortGrace)
		select {
		case out = <-done:
		case <-timer.C:
			abandoned = true
			s.agent.logger.Warn("agent: a tool ignored its cancellation; its result is dropped", "tool", rt.spec.Name, "session", s.id)
		}
		timer.Stop()
	}
	mu.Lock()
	finished = true
	mu.Unlock()
	switch {
	case ctx.Err() != nil && (abandoned || out.err != nil):
		return ErrorResult(abortedText)
	case errors.Is(context.Cause(callCtx), errToolTimeout) && (abandoned || out.err != nil):
		return ErrorResult(fmt.Sprintf("Tool %q timed out after %v", rt.spec.Name, s.agent.cfg.toolTimeout))
	case out.err != nil:
		r := ErrorResult(out.err.Error())
		r.Details = out.result.Details
		return r
	}
	return out.result
}

// toolNames lists the tools' names for an unknown-tool error.
func (a *Agent) toolNames() string {
	names := ""
	for i, n := range a.toolNameList() {
		if i > 0 {
			names += ", "
		}
		names += n
	}
	if names == "" {
		return "none"
	}
	return names
}

// cloneRaw copies raw JSON.
func cloneRaw(raw json.RawMessage) json.RawMessage {
	if raw == nil {
		return nil
	}
	return append(json.RawMessage(nil), raw...)
}

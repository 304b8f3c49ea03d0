package agent

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// TurnResult is how a turn ended.
type TurnResult struct {
	// Text is the text of the turn's last assistant message (the answer,
	// or the step-limit message), redacted like the events' (see [Event]).
	Text string
	// Steps is how many model requests the turn made.
	Steps int
	// Usage is what the provider reported for the turn's last request.
	Usage Usage
	// Total is the usage of all the turn's requests together.
	Total Usage
	// ToolCalls is how many tool calls the turn ran.
	ToolCalls int
	// StepLimit reports that the turn stopped at the step limit.
	StepLimit bool
}

// Prompt runs one turn: it appends the user message content, then asks the
// model, runs the tools it calls (in order) and asks again, until the model
// answers without tool calls or the step limit is reached (the turn then
// ends with an assistant message saying so). Before a request whose context
// would pass the compaction threshold (see [WithContextWindow]) the older
// turns are compacted into a summary ([EventCompaction]); a request the
// provider rejects as too long is compacted and sent once more. Events go
// to emit (may be nil)
// and to the extensions' event handlers: EventTurnStart first, EventTurnEnd
// last, EventError before it when the turn fails.
//
// Turns of one session run one at a time: a second Prompt waits for the
// running turn to end (or for its ctx, or for Close). A Prompt from inside
// the session's own turn (a tool or a handler passing on the context it
// was given) would wait for itself: it fails with [ErrInsideTurn]. Cancelling ctx stops
// the turn at any point: the running tool is cancelled, and every tool call
// without a result gets "Operation aborted", so the history stays valid. The
// returned error is redacted; errors.Is still matches context.Canceled,
// [ErrContextTooLong] and the like.
func (s *Session) Prompt(ctx context.Context, content []Content, emit func(Event)) (TurnResult, error) {
	if len(content) == 0 {
		return TurnResult{}, errors.New("agent: prompt has no content")
	}
	if insideTurn(ctx, s) {
		return TurnResult{}, ErrInsideTurn
	}
	turnCtx, release, err := s.acquire(ctx, emit)
	if err != nil {
		return TurnResult{}, err
	}
	defer release()

	s.emit(Event{Kind: EventTurnStart})
	res, err := s.runTurn(turnCtx, content)
	res.Text = s.agent.red.Redact(res.Text)
	if err != nil {
		err = s.agent.red.RedactError(err)
		s.emit(Event{Kind: EventError, Err: err})
	}
	s.emit(Event{Kind: EventTurnEnd, Text: res.Text, Usage: res.Usage, Err: err})
	return res, err
}

// acquire waits for the session's turn (see [Session.Prompt]) and takes it
// for emit's front end; Close cancels the returned context. release gives
// the turn back.
func (s *Session) acquire(ctx context.Context, emit func(Event)) (turnCtx context.Context, release func(), err error) {
	select {
	case <-s.done:
		return nil, nil, ErrSessionClosed
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	case s.turn <- struct{}{}:
	}
	turnCtx, cancel := context.WithCancel(withTurn(ctx, s))
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		cancel()
		<-s.turn
		return nil, nil, ErrSessionClosed
	}
	s.cancelTurn, s.frontEnd = cancel, emit
	s.text = newTextStream(s.agent.red, func(delta string) { s.emit(Event{Kind: EventTextDelta, Text: delta}) })
	s.mu.Unlock()
	return turnCtx, func() {
		s.mu.Lock()
		s.cancelTurn, s.frontEnd, s.text = nil, nil, nil
		s.mu.Unlock()
		cancel()
		<-s.turn
	}, nil
}

// runTurn is the loop of one turn.
func (s *Session) runTurn(ctx context.Context, content []Content) (TurnResult, error) {
	var res TurnResult
	now := time.Now()
	if err := s.record(Message{Role: RoleUser, Content: s.stamped(cloneContent(content), now), Time: now}); err != nil {
		return res, err
	}
	info := s.Info()
	system := ""
	if s.agent.cfg.systemPrompt != nil {
		system = s.agent.red.Redact(s.agent.cfg.systemPrompt(info))
	}
	tools := s.agent.Tools()
	s.setOverhead(system, tools)
	for {
		if res.Steps == s.agent.cfg.maxSteps {
			res.StepLimit = true
			res.Text = fmt.Sprintf("I stopped after %d model requests, the limit for one turn, before finishing. Send a message to let me continue.", res.Steps)
			text := s.turnText()
			text.write(res.Text)
			text.flush()
			return res, s.record(Message{Role: RoleAssistant, Content: []Content{Text(res.Text)}, Time: time.Now()})
		}
		res.Steps++
		s.autoCompact(ctx)
		resp, err := s.request(ctx, system, tools)
		if err != nil {
			if ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
				err = fmt.Errorf("%w (%w)", ctx.Err(), err)
			}
			return res, err
		}
		res.Usage = resp.Usage
		res.Total = res.Total.add(resp.Usage)
		res.ToolCalls += len(resp.ToolCalls)
		res.Text = resp.Text
		assistant := Message{Role: RoleAssistant, ToolCalls: normalizeCalls(resp.ToolCalls, res.Steps), Time: time.Now()}
		if resp.Text != "" {
			assistant.Content = []Content{Text(resp.Text)}
		}
		if err := s.record(assistant); err != nil {
			return res, err
		}
		if len(assistant.ToolCalls) == 0 {
			return res, nil
		}
		var recordErr error
		for _, call := range assistant.ToolCalls {
			var result Result
			switch {
			case recordErr != nil:
				result = ErrorResult(unrecordedText(recordErr))
			case ctx.Err() != nil:
				result = ErrorResult(abortedText)
			default:
				result = s.runTool(ctx, call)
			}
			msg := Message{
				Role: RoleTool, ToolCallID: call.ID, ToolName: call.Name,
				Content: result.Content, Details: result.Details, IsError: result.IsError, Time: time.Now(),
			}
			if err := s.recordResult(msg); err != nil && recordErr == nil {
				recordErr = err
			}
		}
		if recordErr != nil {
			return res, recordErr
		}
		if err := ctx.Err(); err != nil {
			return res, err
		}
	}
}

// request sends the working context to the model, streaming the answer's
// text as events, and records the usage. When the provider rejects the
// request as too long, the session is compacted (keeping only the latest
// turn) and the request sent once more.
func (s *Session) request(ctx context.Context, system string, tools []ToolSpec) (Response, error) {
	resp, err := s.send(ctx, system, tools)
	if err == nil || !errors.Is(err, ErrContextTooLong) || ctx.Err() != nil {
		return resp, err
	}
	s.agent.logger.Info("agent: the model rejected the request as too long; compacting", "session", s.id)
	if cerr := s.compact(ctx, 1); cerr != nil {
		return resp, fmt.Errorf("agent: the conversation is too long for the model, and compacting it failed (%w): %w", cerr, err)
	}
	resp, err = s.send(ctx, system, tools)
	if errors.Is(err, ErrContextTooLong) {
		err = fmt.Errorf("agent: the conversation is still too long for the model after compacting it: %w", err)
	}
	return resp, err
}

// send makes one model request of the working context. An answer stream
// cut after text arrived ([ErrStreamInterrupted]) is sent once more, after
// an [EventStreamRestart] that tells the front end to drop what it showed.
// An answer from a fallback model is announced with an
// [EventModelFallback].
func (s *Session) send(ctx context.Context, system string, tools []ToolSpec) (Response, error) {
	s.mu.Lock()
	msgs, sent := s.workingContextLocked()
	model := s.model
	s.mu.Unlock()
	req := Request{Model: model, System: system, Messages: msgs, Tools: tools}
	text := s.turnText()
	start := time.Now()
	resp, err := s.out.complete(ctx, req, text.write)
	if errors.Is(err, ErrStreamInterrupted) && ctx.Err() == nil {
		s.agent.logger.Warn("agent: the model's answer was cut off; sending the request again", "session", s.id)
		text.discard()
		s.emit(Event{Kind: EventStreamRestart})
		resp, err = s.out.complete(ctx, req, text.write)
	}
	text.flush()
	s.agent.logger.Debug("model request", "session", s.id, "model", model, "answered_by", resp.Model, "messages", len(msgs),
		"tools", len(tools), "duration", time.Since(start).Round(time.Millisecond), "prompt_tokens", resp.Usage.PromptTokens,
		"cached_tokens", resp.Usage.CachedTokens, "completion_tokens", resp.Usage.CompletionTokens, "ok", err == nil)
	if err != nil {
		return resp, err
	}
	s.measured(resp.Usage, sent)
	s.reportUsage(ctx, model, resp)
	if resp.Model != "" && resp.Model != model {
		s.emit(Event{Kind: EventModelFallback, Text: resp.Model})
	}
	return resp, nil
}

// turnText returns the running turn's text stream, or nil between turns.
func (s *Session) turnText() *textStream {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.text
}

// normalizeCalls gives every call an id, unique within the response.
func normalizeCalls(calls []ToolCall, step int) []ToolCall {
	if len(calls) == 0 {
		return nil
	}
	out := make([]ToolCall, len(calls))
	seen := make(map[string]bool, len(calls))
	for i, c := range calls {
		if c.ID == "" || seen[c.ID] {
			c.ID = fmt.Sprintf("call_%d_%d", step, i+1)
		}
		seen[c.ID] = true
		out[i] = c
	}
	return out
}

// record appends m to the history and the transcript. A failure to
// persist is returned (the turn ends with it), and m is not kept.
func (s *Session) record(m Message) error {
	if err := s.appendTranscript(m); err != nil {
		return err
	}
	s.mu.Lock()
	s.messages = append(s.messages, m)
	s.mu.Unlock()
	return nil
}

// recordResult appends the tool result m to the history, and to the
// transcript. The history keeps m even when the transcript does not: an
// assistant message whose calls lack results would make every later request
// fail. A failure to persist is logged in the agent's episode of transcript
// writes (once at Error, however many results a full disk refuses) and
// returned, so the turn ends with an EventError; reopening the session
// gives the calls whose results the transcript lacks an "Operation
// aborted" result.
func (s *Session) recordResult(m Message) error {
	err := s.appendTranscript(m)
	s.mu.Lock()
	s.messages = append(s.messages, m)
	s.mu.Unlock()
	if err != nil {
		s.transcriptFailed(err, "tool", m.ToolName, "call", m.ToolCallID, "kept", "in memory")
	}
	return err
}

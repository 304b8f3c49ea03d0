package agent

import (
	"encoding/json"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// pendingEvent is an event waiting for delivery, with the front end of the
// turn it was emitted in.
type pendingEvent struct {
	ev       Event
	frontEnd func(Event)
}

// emit delivers ev to the running turn's front end and to every extension's
// event handlers, one event at a time, and returns once it is delivered.
// Error messages are redacted.
func (s *Session) emit(ev Event) {
	p := s.prepareEvent(ev)
	s.emitMu.Lock()
	s.deliver(p)
	s.drainAndUnlock()
}

// emitOrQueue is emit for code that may run inside an event handler (an
// OnEvent handler that starts a process, say), where waiting for the
// delivery lock would wait for itself: when an event is being delivered, ev
// is queued and delivered right after it, by the goroutine delivering it.
func (s *Session) emitOrQueue(ev Event) {
	p := s.prepareEvent(ev)
	s.mu.Lock()
	s.pending = append(s.pending, p)
	s.mu.Unlock()
	if s.emitMu.TryLock() {
		s.drainAndUnlock()
	}
}

// prepareEvent stamps ev with the session, redacts it (see [Event]) and
// pairs it with the running turn's front end.
func (s *Session) prepareEvent(ev Event) pendingEvent {
	ev.SessionID = s.id
	ev = redactEvent(s.agent.red, ev)
	s.mu.Lock()
	frontEnd := s.frontEnd
	s.mu.Unlock()
	return pendingEvent{ev: ev, frontEnd: frontEnd}
}

// drainAndUnlock delivers the queued events, then releases the delivery
// lock. An event queued while the lock was being released is delivered by
// taking the lock again, unless another goroutine holds it (which then
// delivers it), so no queued event is left behind.
func (s *Session) drainAndUnlock() {
	for {
		for {
			s.mu.Lock()
			batch := s.pending
			s.pending = nil
			s.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			for _, p := range batch {
				s.deliver(p)
			}
		}
		s.emitMu.Unlock()
		s.mu.Lock()
		more := len(s.pending) > 0
		s.mu.Unlock()
		if !more || !s.emitMu.TryLock() {
			return
		}
	}
}

// deliver hands p's event to its front end and to the extensions' event
// handlers. The caller holds emitMu.
func (s *Session) deliver(p pendingEvent) {
	if p.frontEnd != nil {
		p.frontEnd(p.ev)
	}
	for _, api := range s.agent.apis {
		for _, h := range api.events {
			if err := safeCall(func() error { h(p.ev); return nil }); err != nil {
				api.logger.Error("agent: event handler failed", "event", p.ev.Kind.String(), "err", s.agent.red.Redact(err.Error()))
			}
		}
	}
}

// redactEvent returns ev with every secret replaced in what it carries
// from the model, a tool or an extension: its text (but a text delta's,
// which the turn's text stream redacted as a stream, see textStream), the
// tool call's id, name and arguments (see redactArguments), the
// extension's name (an MCP server's comes from a configuration file) and
// the error, whatever its kind. A Result was redacted where it was made (runTool,
// invoke): redacting a long output again for every event would scan it
// twice.
func redactEvent(red *redactor.Redactor, ev Event) Event {
	if ev.Kind != EventTextDelta {
		ev.Text = red.Redact(ev.Text)
	}
	ev.ToolCallID, ev.ToolName, ev.Extension = red.Redact(ev.ToolCallID), red.Redact(ev.ToolName), red.Redact(ev.Extension)
	if ev.Arguments != nil {
		if args, redacted := string(ev.Arguments), redactArguments(red, string(ev.Arguments)); redacted != args {
			ev.Arguments = json.RawMessage(redacted)
		}
	}
	ev.Err = red.RedactError(ev.Err)
	return ev
}

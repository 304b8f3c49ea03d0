package agent

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// maxSessionIDLength bounds a session id, which names its transcript file.
const maxSessionIDLength = 128

// SessionOptions opens a session.
type SessionOptions struct {
	// ID names the session and its transcript file: letters, digits, '-',
	// '_' and '.', not starting with '.', at most 128 bytes.
	ID string
	// Scope is the chat (or other target) the session serves, for hooks
	// that differ per chat.
	Scope string
	// TimeZone is an IANA zone id; empty means the agent's default.
	TimeZone string
	// Model overrides the agent's model.
	Model string
}

// SessionInfo is what the system prompt is built from, once per turn.
type SessionInfo struct {
	ID       string
	Scope    string
	TimeZone string
	Model    string
	// Now is the current time in the session's zone.
	Now time.Time
	// Tools are the names of the tools the model is offered.
	Tools []string
}

// Session is one conversation: its messages, model and time zone, and its
// transcript. Its methods are safe for concurrent use; turns run one at a
// time (see [Session.Prompt]).
type Session struct {
	agent *Agent
	id    string
	scope string
	tr    *transcript
	// out is the egress boundary every model request of the session
	// passes (egress.go).
	out *egress

	// turn holds a token while a turn runs; done closes with the session.
	turn chan struct{}
	done chan struct{}

	mu    sync.Mutex
	tz    string
	loc   *time.Location
	model string
	// messages are the session's messages since its last compaction,
	// compaction the summary standing for those before, meter the size of
	// the context.
	messages   []Message
	compaction compactionState
	meter      contextMeter
	usage      Usage
	closed     bool
	cancelTurn context.CancelFunc
	frontEnd   func(Event)
	// text is the running turn's answer text on its way to the events
	// (textstream.go); nil between turns.
	text *textStream

	// emitMu is held while an event is delivered; pending are events
	// queued for delivery by code that cannot wait for it (see
	// emitOrQueue). pending is guarded by mu.
	emitMu  sync.Mutex
	pending []pendingEvent
}

// Session opens the session opts.ID, reloading its history from its
// transcript when there is one. When the session is already open, the open
// one is returned as it is (opts are then ignored). The agent must have been
// started. The transcript is read without holding the agent's lock, so a
// long one never delays other sessions; a second call for an id that is
// being opened waits for that open (or for its ctx) and returns the same
// session.
func (a *Agent) Session(ctx context.Context, opts SessionOptions) (*Session, error) {
	if err := validateSessionID(opts.ID); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	a.mu.Lock()
	for {
		switch {
		case !a.started:
			a.mu.Unlock()
			return nil, errors.New("agent: Session called before Start")
		case a.closed:
			a.mu.Unlock()
			return nil, ErrAgentClosed
		}
		if s, ok := a.sessions[opts.ID]; ok {
			a.mu.Unlock()
			return s, nil
		}
		done, busy := a.opening[opts.ID]
		if !busy {
			break
		}
		a.mu.Unlock()
		select {
		case <-done:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		a.mu.Lock()
	}
	done := make(chan struct{})
	a.opening[opts.ID] = done
	a.mu.Unlock()

	s, err := a.openSession(opts)

	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.opening, opts.ID)
	close(done)
	if err != nil {
		return nil, err
	}
	if a.closed {
		if s.tr != nil {
			s.tr.close()
		}
		return nil, ErrAgentClosed
	}
	a.sessions[opts.ID] = s
	return s, nil
}

// openSession builds the session opts describes and loads its transcript.
func (a *Agent) openSession(opts SessionOptions) (*Session, error) {
	s := &Session{
		agent: a,
		id:    opts.ID,
		scope: opts.Scope,
		out:   newEgress(a.provider, a.red),
		turn:  make(chan struct{}, 1),
		done:  make(chan struct{}),
		model: opts.Model,
	}
	if s.model == "" {
		s.model = a.cfg.model
	}
	s.tz, s.loc = a.sessionZone(opts.TimeZone)
	if a.cfg.sessionDir == "" {
		return s, nil
	}
	tr, msgs, err := a.openTranscript(filepath.Join(a.cfg.sessionDir, opts.ID+".jsonl"), a.logger)
	if err != nil {
		return nil, err
	}
	tr.red = a.red
	s.tr = tr
	s.messages = msgs
	s.compaction = tr.loaded
	s.resetMeterLocked()
	if err := s.repairDanglingCalls(); err != nil {
		tr.close()
		return nil, err
	}
	return s, nil
}

// sessionZone resolves a session's zone: its own, else the agent's default,
// else none.
func (a *Agent) sessionZone(id string) (string, *time.Location) {
	for _, candidate := range []string{id, a.cfg.defaultTimeZone} {
		if candidate == "" {
			continue
		}
		tz, loc, err := resolveZone(candidate)
		if err == nil {
			return tz, loc
		}
		a.logger.Warn("agent: time zone does not resolve; children inherit the host's TZ", "zone", candidate, "err", err)
	}
	return "", time.Local
}

// validateSessionID checks that id is a safe file name.
func validateSessionID(id string) error {
	if id == "" {
		return errors.New("agent: session id is empty")
	}
	if len(id) > maxSessionIDLength {
		return fmt.Errorf("agent: session id is longer than %d bytes", maxSessionIDLength)
	}
	if id[0] == '.' {
		return fmt.Errorf("agent: session id %q starts with a dot", id)
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.'
		if !ok {
			return fmt.Errorf("agent: session id %q holds %q; use letters, digits, '-', '_' and '.'", id, r)
		}
	}
	return nil
}

// repairDanglingCalls gives every tool call of the history that has no
// result an "Operation aborted" result (a crash between a model answer and
// its tool results leaves such calls, which providers reject). Results
// for the last assistant message are appended to the transcript; older
// gaps are filled in memory only.
func (s *Session) repairDanglingCalls() error {
	var repaired []Message
	for i := 0; i < len(s.messages); i++ {
		m := s.messages[i]
		if m.Role != RoleAssistant || len(m.ToolCalls) == 0 {
			continue
		}
		answered := make(map[string]bool)
		j := i + 1
		for ; j < len(s.messages) && s.messages[j].Role == RoleTool; j++ {
			answered[s.messages[j].ToolCallID] = true
		}
		var missing []Message
		for _, c := range m.ToolCalls {
			if !answered[c.ID] {
				missing = append(missing, abortedMessage(c, m.Time))
			}
		}
		if len(missing) == 0 {
			continue
		}
		s.messages = slices.Insert(s.messages, j, missing...)
		if j == len(s.messages)-len(missing) {
			repaired = append(repaired, missing...)
		}
		i = j + len(missing) - 1
	}
	for _, m := range repaired {
		if err := s.appendTranscript(m); err != nil {
			return err
		}
	}
	if len(repaired) > 0 {
		s.agent.logger.Warn("agent: recorded results for tool calls a previous run left unanswered", "session", s.id, "calls", len(repaired))
	}
	return nil
}

// abortedMessage is the tool result of a call that never finished.
func abortedMessage(c ToolCall, t time.Time) Message {
	return Message{
		Role: RoleTool, ToolCallID: c.ID, ToolName: c.Name, IsError: true,
		Content: []Content{Text(abortedText)}, Time: t,
	}
}

// ID returns the session's id.
func (s *Session) ID() string { return s.id }

// Scope returns the session's scope.
func (s *Session) Scope() string { return s.scope }

// TimeZone returns the session's IANA zone id, empty when none resolves.
func (s *Session) TimeZone() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.tz
}

// SetTimeZone sets the session's zone from the next turn on (and for the
// processes started from then on). An empty id means the agent's default.
// An id that does not resolve is an error and changes nothing.
func (s *Session) SetTimeZone(iana string) error {
	var tz string
	var loc *time.Location
	if iana == "" {
		tz, loc = s.agent.sessionZone("")
	} else {
		var err error
		if tz, loc, err = resolveZone(iana); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tz, s.loc = tz, loc
	return nil
}

// Model returns the model the session's requests name.
func (s *Session) Model() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.model
}

// SetModel sets the model from the next request on; empty means the
// agent's default.
func (s *Session) SetModel(name string) {
	if name == "" {
		name = s.agent.cfg.model
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.model = name
}

// LastUsage returns the usage the provider reported for the session's last
// request.
func (s *Session) LastUsage() Usage {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.usage
}

// Messages returns a deep copy of the session's working context, the
// messages its next request sends: after a compaction, a user message
// holding the summary of the earlier conversation comes first; tool results
// before the latest kept turns are shortened (the transcript keeps them
// whole).
func (s *Session) Messages() []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	msgs, _ := s.workingContextLocked()
	return msgs
}

// Info returns what the system prompt is built from, with Now the current
// time in the session's zone.
func (s *Session) Info() SessionInfo {
	tools := s.agent.toolNameList()
	s.mu.Lock()
	defer s.mu.Unlock()
	return SessionInfo{ID: s.id, Scope: s.scope, TimeZone: s.tz, Model: s.model, Now: time.Now().In(s.loc), Tools: tools}
}

// ToolContext returns a context bound to this session for the host (no
// extension origin), for starting processes outside a tool call. Its events
// reach the extensions, and the front end of a running turn.
func (s *Session) ToolContext() *ToolContext {
	return &ToolContext{
		SessionID: s.id,
		Scope:     s.scope,
		TimeZone:  s.TimeZone(),
		Workspace: s.agent.cfg.workspace,
		session:   s,
	}
}

// Close ends the session: it cancels a running turn and waits for it, calls
// the extensions' session-close handlers in load order, and closes the
// transcript. Later turns fail with [ErrSessionClosed]; opening the id again
// reloads it from its transcript. Close is idempotent.
//
// Close must not be called from inside the session's own turn (a tool, or an
// extension handler running for the turn): it would wait for the turn that
// waits for it. Such code calls [Session.CloseContext] with the context it
// was given, which detects that and fails instead.
func (s *Session) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	cancel := s.cancelTurn
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	s.turn <- struct{}{} // wait for a running turn; never released
	for _, api := range s.agent.apis {
		for _, h := range api.sessionClose {
			if err := safeCall(func() error { h(s.id); return nil }); err != nil {
				api.logger.Error("agent: session close handler failed", "session", s.id, "err", s.agent.red.Redact(err.Error()))
			}
		}
	}
	if s.tr != nil {
		if err := s.tr.close(); err != nil {
			s.agent.logger.Warn("agent: closing transcript", "session", s.id, "err", err)
		}
	}
	s.agent.mu.Lock()
	if s.agent.sessions[s.id] == s {
		delete(s.agent.sessions, s.id)
	}
	s.agent.mu.Unlock()
}

// CloseContext is [Session.Close] for code that may run inside a turn: when
// ctx belongs to a turn of this session (the context a tool or a tool_call,
// tool_result or process_spawn handler was given, or one derived from it),
// it closes nothing and returns [ErrInsideTurn]; otherwise it closes the
// session and returns nil.
func (s *Session) CloseContext(ctx context.Context) error {
	if insideTurn(ctx, s) {
		return ErrInsideTurn
	}
	s.Close()
	return nil
}

// cloneMessages returns a deep copy of msgs.
func cloneMessages(msgs []Message) []Message {
	if msgs == nil {
		return nil
	}
	out := make([]Message, len(msgs))
	for i, m := range msgs {
		out[i] = cloneMessage(m)
	}
	return out
}

// cloneMessage returns a deep copy of m.
func cloneMessage(m Message) Message {
	m.Content = cloneContent(m.Content)
	m.ToolCalls = slices.Clone(m.ToolCalls)
	m.Details = cloneDetails(m.Details)
	return m
}

// cloneContent returns a deep copy of content.
func cloneContent(content []Content) []Content {
	if content == nil {
		return nil
	}
	out := make([]Content, len(content))
	for i, c := range content {
		c.Data = slices.Clone(c.Data)
		out[i] = c
	}
	return out
}

// cloneResult returns a deep copy of r.
func cloneResult(r Result) Result {
	return Result{Content: cloneContent(r.Content), Details: cloneDetails(r.Details), IsError: r.IsError}
}

// cloneDetails returns a deep copy of the JSON-shaped parts of d (maps and
// slices); other values are shared.
func cloneDetails(d map[string]any) map[string]any {
	if d == nil {
		return nil
	}
	out := maps.Clone(d)
	for k, v := range out {
		out[k] = cloneValue(v)
	}
	return out
}

// cloneValue deep-copies maps and slices of the JSON shapes.
func cloneValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return cloneDetails(x)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cloneValue(e)
		}
		return out
	case []string:
		return slices.Clone(x)
	case map[string]string:
		return maps.Clone(x)
	}
	return v
}

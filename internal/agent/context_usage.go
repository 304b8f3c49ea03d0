package agent

import "time"

// Defaults of the context window options.
const (
	// DefaultContextWindow is the context window assumed unless
	// [WithContextWindow] says otherwise.
	DefaultContextWindow = 128000
	// DefaultContextReserve is how many tokens are kept free for the answer
	// unless [WithContextReserve] says otherwise (at most a quarter of the
	// window).
	DefaultContextReserve = 16384
	// DefaultKeepTurns is how many of the latest user turns compaction keeps
	// word for word unless [WithCompactionKeepTurns] says otherwise.
	DefaultKeepTurns = 3
)

// Token estimates, for what the provider has not counted yet.
const (
	// charsPerToken is the rough size of a token in bytes of text.
	charsPerToken = 4
	// imageTokens is the rough cost of one image.
	imageTokens = 800
	// messageTokens is the rough overhead of one message.
	messageTokens = 4
)

// ContextUsage is how full a session's context window is.
type ContextUsage struct {
	// Tokens is the size of the next request's context: the prompt tokens
	// the provider reported for the last request, plus an estimate (a
	// token per 4 bytes of text) of what was added since. Before any
	// request (or after a compaction) it is an estimate.
	Tokens int
	// Window is the model's context window.
	Window int
	// Threshold is the size above which the session is compacted before
	// its next request: the window minus the reserve for the answer.
	Threshold int
	// Percent is Tokens as a whole percentage of Window.
	Percent int
	// LastCompaction is when the session was last compacted; zero when
	// never.
	LastCompaction time.Time
}

// contextMeter tracks the size of a session's context: tokens counts the
// session's messages before base (and the summary, system prompt and tools);
// the messages from base on are estimated.
type contextMeter struct {
	tokens int
	base   int
	// overhead is the estimated size of the last turn's system prompt and
	// tools, counted after a compaction until the provider reports again.
	overhead int
}

// ContextUsage reports how full the session's context window is.
func (s *Session) ContextUsage() ContextUsage {
	window, threshold := s.agent.cfg.contextLimits()
	s.mu.Lock()
	defer s.mu.Unlock()
	tokens := s.contextTokensLocked()
	return ContextUsage{
		Tokens:         tokens,
		Window:         window,
		Threshold:      threshold,
		Percent:        tokens * 100 / window,
		LastCompaction: s.compaction.at,
	}
}

// contextTokensLocked is the size of the next request's context; s.mu is
// held.
func (s *Session) contextTokensLocked() int {
	base := min(s.meter.base, len(s.messages))
	return s.meter.tokens + estimateMessages(s.messages[base:])
}

// overThreshold reports whether the next request would pass the compaction
// threshold.
func (s *Session) overThreshold() bool {
	_, threshold := s.agent.cfg.contextLimits()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.contextTokensLocked() > threshold
}

// measured records the prompt tokens the provider reported for a request
// that sent the session's first sent messages.
func (s *Session) measured(u Usage, sent int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usage = u
	if u.PromptTokens > 0 {
		s.meter.tokens, s.meter.base = u.PromptTokens, sent
	}
}

// resetMeterLocked estimates the context afresh from the summary (after a
// compaction or a reload); s.mu is held.
func (s *Session) resetMeterLocked() {
	s.meter.tokens, s.meter.base = s.meter.overhead, 0
	if s.compaction.summary != "" {
		s.meter.tokens += estimateMessages([]Message{summaryMessage(s.compaction)})
	}
}

// setOverhead records the estimated size of a turn's system prompt and
// tools.
func (s *Session) setOverhead(system string, tools []ToolSpec) {
	n := len(system)
	for _, t := range tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.meter.overhead = n / charsPerToken
}

// contextLimits returns the context window and the compaction threshold.
func (c *config) contextLimits() (window, threshold int) {
	window = c.contextWindow
	reserve := c.contextReserve
	if reserve < 0 {
		reserve = min(DefaultContextReserve, window/4)
	}
	reserve = min(reserve, window/2)
	return window, window - reserve
}

// estimateMessages estimates the tokens of msgs.
func estimateMessages(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += messageTokens
		for _, c := range m.Content {
			if c.Type == ImageContent {
				n += imageTokens
				continue
			}
			n += len(c.Text) / charsPerToken
		}
		for _, c := range m.ToolCalls {
			n += (len(c.Name) + len(c.Arguments)) / charsPerToken
		}
	}
	return n
}

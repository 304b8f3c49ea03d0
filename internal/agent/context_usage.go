package agent

import "time"

// Defaults of the context window options.
const (
	// DefaultContextWindow is the context window assumed unless
	// [WithContextWindow] says otherwise.
	DefaultContextWindow = 128000
	// DefaultContextReserve is how many tokens are kept free for the answer
	// (at most a quarter of the window).
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
	// request, after a compaction, or with a provider that reports no
	// usage, it is an estimate of the whole request: the system prompt,
	// the tools' specs, the summary and the messages.
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

// toolSpecOverhead is the rough size, in bytes, of the JSON that wraps one
// tool's name, description and schema in a request.
const toolSpecOverhead = 60

// contextMeter tracks the size of a session's context. When the provider
// reported the prompt tokens of a request (tokens > 0), the size is those
// plus an estimate of the messages from base on; otherwise it is estimated
// whole: the system prompt and the tools' specs (overhead), the summary and
// every message.
type contextMeter struct {
	tokens int
	base   int
	// overhead is the estimated size of the system prompt and the tools;
	// overheadKnown says it was measured (by a turn, or by ContextUsage).
	overhead      int
	overheadKnown bool
}

// ContextUsage reports how full the session's context window is.
func (s *Session) ContextUsage() ContextUsage {
	s.mu.Lock()
	known := s.meter.overheadKnown
	s.mu.Unlock()
	if !known {
		s.estimateOverhead()
	}
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

// estimateOverhead measures the system prompt and the tools a request of
// the session would carry, before its first turn.
func (s *Session) estimateOverhead() {
	system := ""
	if s.agent.cfg.systemPrompt != nil {
		system = s.agent.cfg.systemPrompt(s.Info())
	}
	s.setOverhead(system, s.agent.Tools())
}

// contextTokensLocked is the size of the next request's context; s.mu is
// held.
func (s *Session) contextTokensLocked() int {
	if s.meter.tokens > 0 {
		base := min(s.meter.base, len(s.messages))
		return s.meter.tokens + estimateMessages(s.messages[base:])
	}
	n := s.meter.overhead + estimateMessages(s.messages)
	if s.compaction.summary != "" {
		n += estimateMessages([]Message{summaryMessage(s.compaction)})
	}
	return n
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
// that sent the session's first sent messages; a provider that reports
// none leaves the estimate in charge.
func (s *Session) measured(u Usage, sent int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.usage = u
	if u.PromptTokens > 0 {
		s.meter.tokens, s.meter.base = u.PromptTokens, sent
	}
}

// resetMeterLocked drops the provider's last count (after a compaction or
// a reload): the context is estimated afresh until it reports again; s.mu
// is held.
func (s *Session) resetMeterLocked() {
	s.meter.tokens, s.meter.base = 0, 0
}

// setOverhead records the estimated size of a turn's system prompt and
// tools (a token per 4 bytes, the tools as the request spells them).
func (s *Session) setOverhead(system string, tools []ToolSpec) {
	n := len(system)
	if system != "" {
		n += messageTokens * charsPerToken
	}
	for _, t := range tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters) + toolSpecOverhead
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.meter.overhead, s.meter.overheadKnown = n/charsPerToken, true
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

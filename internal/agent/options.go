package agent

import (
	"context"
	"log/slog"
	"time"
)

// DefaultMaxSteps is how many model calls one turn may make.
const DefaultMaxSteps = 50

// Option configures an [Agent] built by [New].
type Option func(*config)

// config holds what the options set.
type config struct {
	sessionDir      string
	workspace       string
	model           string
	systemPrompt    func(SessionInfo) string
	defaultTimeZone string
	maxSteps        int
	logger          *slog.Logger
	tools           []Tool
	extensions      []Extension
	toolTimeout     time.Duration
	abortGrace      time.Duration
	contextWindow   int
	contextReserve  int
	keepTurns       int
	usageRecorder   func(context.Context, UsageReport)
	messageTimes    bool
	// transcriptQuiet is how long an episode of failed transcript writes
	// lasts at least after its latest failure (transcriptQuiet).
	transcriptQuiet time.Duration
}

// WithSessionDir keeps one append-only JSONL transcript per session in dir
// (created when missing). Without it, sessions live in memory only.
func WithSessionDir(dir string) Option { return func(c *config) { c.sessionDir = dir } }

// WithWorkspace sets the agent's working directory: the default cwd of the
// processes tools and extensions start.
func WithWorkspace(dir string) Option { return func(c *config) { c.workspace = dir } }

// WithModel sets the model a session uses unless its options name another.
func WithModel(name string) Option { return func(c *config) { c.model = name } }

// WithSystemPrompt sets the function that builds the system prompt. It is
// called once per turn, so the prompt can carry the current time.
func WithSystemPrompt(f func(SessionInfo) string) Option {
	return func(c *config) { c.systemPrompt = f }
}

// WithDefaultTimeZone sets the IANA time zone of sessions whose options name
// none.
func WithDefaultTimeZone(iana string) Option {
	return func(c *config) { c.defaultTimeZone = iana }
}

// withTranscriptQuiet sets how long an episode of failed transcript writes
// lasts at least after its latest failure (default transcriptQuiet).
func withTranscriptQuiet(d time.Duration) Option {
	return func(c *config) { c.transcriptQuiet = d }
}

// withMaxSteps sets how many model calls one turn may make (default
// [DefaultMaxSteps]); values below 1 are ignored.
func withMaxSteps(n int) Option {
	return func(c *config) {
		if n >= 1 {
			c.maxSteps = n
		}
	}
}

// WithLogger sets the logger (default: discard).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) {
		if l != nil {
			c.logger = l
		}
	}
}

// WithTools adds host tools, offered to the model before the extensions'
// tools.
func WithTools(tools ...Tool) Option {
	return func(c *config) { c.tools = append(c.tools, tools...) }
}

// WithExtensions adds extensions. The order of registration is the load
// order: activation, event handlers and tools follow it.
func WithExtensions(exts ...Extension) Option {
	return func(c *config) { c.extensions = append(c.extensions, exts...) }
}

// WithToolTimeout bounds every tool call (default: none; tools such as bash
// have their own timeout). A call that runs out gets an error result.
func WithToolTimeout(d time.Duration) Option {
	return func(c *config) { c.toolTimeout = d }
}

// WithAbortGrace sets how long a cancelled turn waits for a running tool to
// return before it records "Operation aborted" and moves on (default 5s).
func WithAbortGrace(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.abortGrace = d
		}
	}
}

// WithContextWindow sets the model's context window in tokens (default
// [DefaultContextWindow]); values below 1 are ignored.
func WithContextWindow(tokens int) Option {
	return func(c *config) {
		if tokens >= 1 {
			c.contextWindow = tokens
		}
	}
}

// withContextReserve sets how many tokens of the context window are kept
// free for the answer: a session is compacted before a request would use
// more than the window minus the reserve. The default is
// [DefaultContextReserve], at most a quarter of the window; values below 0
// are ignored, and a reserve is never more than half the window.
func withContextReserve(tokens int) Option {
	return func(c *config) {
		if tokens >= 0 {
			c.contextReserve = tokens
		}
	}
}

// WithCompactionKeepTurns sets how many of the latest user turns compaction
// keeps word for word (default [DefaultKeepTurns]); older tool results are
// shortened in the working context. Values below 1 are ignored.
func WithCompactionKeepTurns(n int) Option {
	return func(c *config) {
		if n >= 1 {
			c.keepTurns = n
		}
	}
}

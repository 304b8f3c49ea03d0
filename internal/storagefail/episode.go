package storagefail

import (
	"log/slog"
	"sync"
	"time"
)

// Messages are the lines an [Episode] logs.
type Messages struct {
	// Began is the Error line of the failure that begins an episode: it
	// should say what cannot be written, what that means for the user,
	// and that the failures after it are logged at Debug.
	Began string
	// Again is the Debug line of every further failure in the episode.
	Again string
	// Ended is the Info line that ends the episode, logged with how long it
	// lasted and how many failures it counted.
	Ended string
}

// Episode follows one writer's failed writes: the first failure begins an
// episode and is logged at Error, the failures during it at Debug, and the
// first success after them (see [WithQuiet]) ends it with one Info line.
// It is safe for concurrent use.
type Episode struct {
	logger *slog.Logger
	msgs   Messages
	now    func() time.Time
	quiet  time.Duration

	mu sync.Mutex
	// since is when the episode began (zero: none), last its latest
	// failure; failures counts its failed writes.
	since, last time.Time
	failures    int
}

// Option configures an [Episode].
type Option func(*Episode)

// WithQuiet makes an episode end only at a success that comes at least d
// after its latest failure. A nearly full disk takes a write that fits in
// a file's last block and refuses a larger one: without it, every small
// write between two large ones would end an episode, and the next large
// one begin another.
func WithQuiet(d time.Duration) Option {
	return func(e *Episode) { e.quiet = d }
}

// NewEpisode returns an episode tracker that logs msgs to logger (nil:
// nowhere).
func NewEpisode(logger *slog.Logger, msgs Messages, opts ...Option) *Episode {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	e := &Episode{logger: logger, msgs: msgs, now: time.Now}
	for _, opt := range opts {
		opt(e)
	}
	return e
}

// Failed records that a write failed with err, logged with attrs, and
// reports whether it began an episode.
func (e *Episode) Failed(err error, attrs ...any) (began bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.failures++
	e.last = e.now()
	attrs = append(attrs, "err", err)
	if !e.since.IsZero() {
		e.logger.Debug(e.msgs.Again, attrs...)
		return false
	}
	e.since = e.last
	e.logger.Error(e.msgs.Began, attrs...)
	return true
}

// Succeeded records that a write succeeded: the episode, if one is going
// on (and its latest failure is not within the quiet time), ends with its
// Info line, logged with attrs. It reports whether it ended one.
func (e *Episode) Succeeded(attrs ...any) (ended bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	now := e.now()
	if e.since.IsZero() || now.Sub(e.last) < e.quiet {
		return false
	}
	attrs = append(attrs, "lasted", now.Sub(e.since).Round(time.Second), "failures", e.failures)
	e.logger.Info(e.msgs.Ended, attrs...)
	e.since, e.failures = time.Time{}, 0
	return true
}

// Active reports whether an episode is going on.
func (e *Episode) Active() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return !e.since.IsZero()
}

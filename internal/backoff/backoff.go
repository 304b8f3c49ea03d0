// Package backoff is the one rule for how long the bot waits before trying
// again something that failed (a Bot API call, getUpdates, a model request,
// an MCP server, a notice a restart owes a chat), and the one way it waits:
// [Sleep], which ends early when its context does.
//
// A [Policy] grows the wait from Base, doubling with every failure in a
// row, up to Max, and takes a random part of it off (Jitter), so that many
// clients that failed together do not come back together.
//
// # A server's Retry-After is never shortened
//
// When the other side says how long to wait (HTTP's Retry-After, the Bot
// API's retry_after), the wait is that long, whatever Max says: a server
// asked again sooner refuses again, and some (Telegram) count the early
// try against the client. A caller that cannot wait so long does not try
// early instead: it gives up at once, returning the server's error. It
// cannot wait when its context ends before the wait would, or when the
// wait is longer than the policy's MaxRetryAfter (0: no limit but the
// context). [Policy.Wait] applies the rule; the Bot API client, the model
// provider and the MCP extension all follow it.
package backoff

import (
	"context"
	"math"
	"math/rand/v2"
	"time"
)

// Policy says how long to wait before each retry. The zero Policy waits
// nothing; a Policy is a value, safe for concurrent use.
type Policy struct {
	// Base is the wait after the first failure.
	Base time.Duration
	// Max caps the wait that grows from Base (a Retry-After is not
	// capped by it); 0 means no cap.
	Max time.Duration
	// Jitter is the share of the wait that is random, from 0 (the wait
	// is exact) to 1: a wait d becomes one drawn from [d·(1−Jitter), d].
	Jitter float64
	// MaxRetryAfter is the longest Retry-After the caller waits; a server
	// asking for more makes [Policy.Wait] give up. 0 means no limit.
	MaxRetryAfter time.Duration
}

// maxShift bounds the doubling: Base doubled so often is beyond any wait.
const maxShift = 62

// Bounds returns the shortest and the longest wait before retry n (0 for
// the retry after the first failure): Base doubled n times, capped by Max,
// less up to its Jitter share.
func (p Policy) Bounds(n int) (lo, hi time.Duration) {
	if p.Base <= 0 {
		return 0, 0
	}
	shift := min(max(n, 0), maxShift)
	hi = math.MaxInt64
	if p.Base <= math.MaxInt64>>shift {
		hi = p.Base << shift
	}
	if p.Max > 0 {
		hi = min(hi, p.Max)
	}
	j := min(max(p.Jitter, 0), 1)
	return hi - time.Duration(float64(hi)*j), hi
}

// Delay returns the wait before retry n, drawn between [Policy.Bounds].
func (p Policy) Delay(n int) time.Duration {
	lo, hi := p.Bounds(n)
	if hi <= lo {
		return hi
	}
	return lo + rand.N(hi-lo+1)
}

// Wait returns the wait before retry n when the last answer asked for
// retryAfter (0: it asked for nothing), and whether the caller should
// retry at all. A Retry-After is waited whole, never shortened to Max:
// when it outlasts ctx's deadline or exceeds MaxRetryAfter, ok is false
// and the caller gives up at once with the server's error. Without one,
// the wait is [Policy.Delay] and ok is true.
func (p Policy) Wait(ctx context.Context, n int, retryAfter time.Duration) (d time.Duration, ok bool) {
	if retryAfter <= 0 {
		return p.Delay(n), true
	}
	if p.MaxRetryAfter > 0 && retryAfter > p.MaxRetryAfter {
		return retryAfter, false
	}
	if deadline, has := ctx.Deadline(); has && time.Until(deadline) < retryAfter {
		return retryAfter, false
	}
	return retryAfter, true
}

// Sleep waits d or until ctx ends, and reports whether the whole of d
// passed (false at once when ctx has already ended, even for d ≤ 0).
func Sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// Sleeper is how a loop waits between tries: [Sleep], or a test's
// replacement that records the waits or skips them.
type Sleeper func(ctx context.Context, d time.Duration) bool

// Clock is the time a loop's back-off is measured by, a seam for tests: a
// loop that notes when it may try again (a server not to be called before
// then) asks Now, and waits with Sleep. The zero Clock is the system's.
type Clock struct {
	// NowFunc returns the current time; nil means time.Now.
	NowFunc func() time.Time
	// SleepFunc waits; nil means [Sleep].
	SleepFunc Sleeper
}

// Now returns the clock's current time.
func (c Clock) Now() time.Time {
	if c.NowFunc != nil {
		return c.NowFunc()
	}
	return time.Now()
}

// Sleep waits d on the clock, or until ctx ends, and reports whether the
// whole of d passed.
func (c Clock) Sleep(ctx context.Context, d time.Duration) bool {
	if c.SleepFunc != nil {
		return c.SleepFunc(ctx, d)
	}
	return Sleep(ctx, d)
}

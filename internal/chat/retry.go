package chat

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"time"
)

// RetryPolicy says how often and how long failed Bot API calls are retried.
type RetryPolicy struct {
	// Attempts bounds the tries of one call (first try included).
	Attempts int
	// BaseDelay is the first backoff after a 5xx or network error, doubled
	// on every retry up to MaxDelay.
	BaseDelay time.Duration
	// MaxDelay caps the backoff after a 5xx or network error. It never
	// shortens a 429's retry_after: Telegram rejects an earlier retry, so
	// the call waits the whole retry_after, or gives up when the caller's
	// context ends before it.
	MaxDelay time.Duration

	// wait sleeps between tries (sleep, unless a test replaces it).
	wait func(ctx context.Context, d time.Duration) bool
}

// DefaultRetryPolicy returns the policy a Host uses unless WithRetryPolicy
// says otherwise: 8 tries, backoff from half a second to a minute.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{Attempts: 8, BaseDelay: 500 * time.Millisecond, MaxDelay: time.Minute}
}

// noticePolicy returns the policy of transient notices (command replies,
// "queued", callback answers): two tries, so that a Telegram outage does
// not keep them going for minutes.
func noticePolicy(p RetryPolicy) RetryPolicy {
	p.Attempts = min(max(p.Attempts, 1), 2)
	return p
}

// backoff returns the delay before retry n (from 0), with jitter.
func (p RetryPolicy) backoff(n int) time.Duration {
	d := p.BaseDelay << min(n, 16)
	if d > p.MaxDelay || d <= 0 {
		d = p.MaxDelay
	}
	return d/2 + rand.N(d/2+1)
}

// retry runs call until it succeeds, fails for good, or the policy's tries
// run out: a 429 waits its whole retry_after (and gives up at once when ctx
// ends before that), a 5xx or network error backs off, a 403 is returned at
// once (the caller drops the message), and so is any other error.
func (p RetryPolicy) retry(ctx context.Context, logger *slog.Logger, method string, call func(context.Context) error) error {
	wait := p.wait
	if wait == nil {
		wait = sleep
	}
	var err error
	for attempt := 0; attempt < max(p.Attempts, 1); attempt++ {
		if err = call(ctx); err == nil {
			return nil
		}
		if ctx.Err() != nil || attempt == max(p.Attempts, 1)-1 {
			return err
		}
		class, after := classify(err)
		var delay time.Duration
		switch class {
		case classRateLimited:
			delay = max(after, p.BaseDelay)
			if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < delay {
				logger.Warn("telegram asks to wait longer than the call may take; giving up", "method", method, "err", err, "retry_after", delay)
				return err
			}
		case classTransient:
			delay = p.backoff(attempt)
		default:
			return err
		}
		logger.Warn("telegram call failed; retrying", "method", method, "err", err, "delay", delay, "attempt", attempt+1)
		if !wait(ctx, delay) {
			return err
		}
	}
	return err
}

// sleep waits d or until ctx is done, and reports whether d passed.
func sleep(ctx context.Context, d time.Duration) bool {
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

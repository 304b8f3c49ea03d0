package botapi

import (
	"context"
	"time"

	"github.com/volcanic/telegram-agent/internal/backoff"
)

// RetryPolicy says how often and how long failed calls are retried.
type RetryPolicy struct {
	// Attempts bounds the tries of one call (first try included).
	Attempts int
	// BaseDelay is the first back-off after a 5xx or network error, doubled
	// on every retry up to MaxDelay.
	BaseDelay time.Duration
	// MaxDelay caps the back-off after a 5xx or network error. It never
	// shortens a 429's retry_after (the rule of package backoff):
	// Telegram rejects an earlier retry, so the call waits the whole
	// retry_after, or gives up when the caller's context ends before it.
	MaxDelay time.Duration
}

// DefaultRetryPolicy returns the policy of a Client unless WithRetryPolicy
// says otherwise: 8 tries, back-off from half a second to a minute.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{Attempts: 8, BaseDelay: 500 * time.Millisecond, MaxDelay: time.Minute}
}

// Backoff returns the delay before retry n (from 0), with jitter: between
// half and all of BaseDelay doubled n times, capped by MaxDelay.
func (p RetryPolicy) Backoff(n int) time.Duration { return p.policy().Delay(n) }

// policy is p as a back-off policy: half of each wait is jitter, a
// MaxDelay of 0 waits nothing, and a retry_after is waited whole however
// long (the caller's context bounds it).
func (p RetryPolicy) policy() backoff.Policy {
	if p.MaxDelay <= 0 {
		return backoff.Policy{}
	}
	return backoff.Policy{Base: p.BaseDelay, Max: p.MaxDelay, Jitter: 0.5}
}

// retry runs call until it succeeds, fails for good, or the policy's tries
// run out: a 429 waits its whole retry_after (and gives up at once when ctx
// ends before that), a 5xx or network error backs off, and any other error
// (a 403 included: the caller drops the message) is returned at once.
func (c *Client) retry(ctx context.Context, method string, call func(context.Context) error) error {
	p, logger := c.policy, c.s.logger
	tries := max(p.Attempts, 1)
	var err error
	for attempt := range tries {
		if err = call(ctx); err == nil {
			return nil
		}
		if ctx.Err() != nil || attempt == tries-1 {
			return err
		}
		var delay time.Duration
		switch ClassOf(err) {
		case RateLimited:
			var ok bool
			if delay, ok = p.policy().Wait(ctx, attempt, max(RetryAfter(err), p.BaseDelay, time.Nanosecond)); !ok {
				logger.Warn("telegram asks to wait longer than the call may take; giving up", "method", method, "err", err, "retry_after", delay)
				return err
			}
		case Transient:
			delay = p.Backoff(attempt)
		default:
			return err
		}
		logger.Warn("telegram call failed; retrying", "method", method, "err", err, "delay", delay, "attempt", attempt+1)
		if !c.s.wait(ctx, delay) {
			return err
		}
	}
	return err
}

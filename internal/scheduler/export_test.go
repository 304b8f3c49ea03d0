package scheduler

import "time"

// Options only tests set, under the names the tests use; production keeps
// the defaults.

// WithClock is withClock, for the tests.
func WithClock(now func() time.Time) Option { return withClock(now) }

// WithMaxJobs is withMaxJobs, for the tests.
func WithMaxJobs(n int) Option { return withMaxJobs(n) }

// WithMinInterval is withMinInterval, for the tests.
func WithMinInterval(d time.Duration) Option { return withMinInterval(d) }

// WithOutputLimit is withOutputLimit, for the tests.
func WithOutputLimit(n int) Option { return withOutputLimit(n) }

// WithScriptTimeout is withScriptTimeout, for the tests.
func WithScriptTimeout(d time.Duration) Option { return withScriptTimeout(d) }

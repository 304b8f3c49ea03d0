package mcp

import "time"

// Options only tests set, under the names the tests use; production keeps
// the defaults.

// WithCallTimeout is withCallTimeout, for the tests.
func WithCallTimeout(d time.Duration) Option { return withCallTimeout(d) }

// WithIdleTimeout is withIdleTimeout, for the tests.
func WithIdleTimeout(d time.Duration) Option { return withIdleTimeout(d) }

// WithReconnectBackoff is withReconnectBackoff, for the tests.
func WithReconnectBackoff(first, most time.Duration) Option { return withReconnectBackoff(first, most) }

// WithStopGrace is withStopGrace, for the tests.
func WithStopGrace(d time.Duration) Option { return withStopGrace(d) }

package tools

import "time"

// Options only tests set, under the names the tests use; production keeps
// the defaults.

// WithDefaultTimeout is withDefaultTimeout, for the tests.
func WithDefaultTimeout(d time.Duration) BashOption { return withDefaultTimeout(d) }

// WithPipeGrace is withPipeGrace, for the tests.
func WithPipeGrace(d time.Duration) BashOption { return withPipeGrace(d) }

// WithProgressInterval is withProgressInterval, for the tests.
func WithProgressInterval(d time.Duration) BashOption { return withProgressInterval(d) }

// WithSpillLimits is withSpillLimits, for the tests.
func WithSpillLimits(maxBytes int64, maxAge time.Duration, maxFiles int) BashOption {
	return withSpillLimits(maxBytes, maxAge, maxFiles)
}

// WithTailLimits is withTailLimits, for the tests.
func WithTailLimits(maxLines, maxBytes int) BashOption { return withTailLimits(maxLines, maxBytes) }

// WithInspectLimit is withInspectLimit, for the tests.
func WithInspectLimit(n int) BashOption { return withInspectLimit(n) }

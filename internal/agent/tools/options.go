package tools

import (
	"time"

	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// The bash tool's defaults.
const (
	// DefaultBashTimeout is how long a command may run when the call names
	// no timeout.
	DefaultBashTimeout = 120 * time.Second
	// DefaultKillGrace is how long a timed-out or cancelled command's process
	// group has between SIGTERM and SIGKILL.
	DefaultKillGrace = 2 * time.Second
	// DefaultPipeGrace is how long the tool waits, after the shell exited,
	// for the processes it left behind to close the output pipe before it
	// kills its process group.
	DefaultPipeGrace = time.Second
	// DefaultProgressInterval is the shortest time between two progress
	// snapshots.
	DefaultProgressInterval = 250 * time.Millisecond
	// DefaultMaxLines and DefaultMaxBytes bound the output a tool returns:
	// the tail of bash's output, the lines read returns; whichever limit is
	// reached first applies.
	DefaultMaxLines = 2000
	DefaultMaxBytes = 50 * 1024
	// DefaultSpillMaxBytes caps each file bash saves a full output in;
	// past it, only the tail is kept.
	DefaultSpillMaxBytes = 64 << 20
	// DefaultSpillMaxAge and DefaultSpillMaxFiles bound the saved full
	// outputs: older files are removed, and only the newest are kept.
	DefaultSpillMaxAge   = 24 * time.Hour
	DefaultSpillMaxFiles = 20
)

// bashConfig is what the BashOptions set.
type bashConfig struct {
	defaultTimeout   time.Duration
	maxTimeout       time.Duration
	killGrace        time.Duration
	pipeGrace        time.Duration
	progressInterval time.Duration
	maxLines         int
	maxBytes         int
	spillMaxBytes    int64
	spillMaxAge      time.Duration
	spillMaxFiles    int
	// view confines the file tools All returns (WithView); nil leaves
	// them unconfined.
	view *sandbox.View
	// inspectLimit bounds the bytes send_file decompresses to look for
	// secrets inside a file.
	inspectLimit int
	// newTicker starts the progress ticker (a seam for tests).
	newTicker func(d time.Duration) (ticks <-chan time.Time, stop func())
}

// defaultBashConfig returns the configuration NewBash starts from.
func defaultBashConfig() bashConfig {
	return bashConfig{
		defaultTimeout:   DefaultBashTimeout,
		killGrace:        DefaultKillGrace,
		pipeGrace:        DefaultPipeGrace,
		progressInterval: DefaultProgressInterval,
		maxLines:         DefaultMaxLines,
		maxBytes:         DefaultMaxBytes,
		spillMaxBytes:    DefaultSpillMaxBytes,
		spillMaxAge:      DefaultSpillMaxAge,
		spillMaxFiles:    DefaultSpillMaxFiles,
		inspectLimit:     maxInspected,
		newTicker: func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		},
	}
}

// BashOption configures the tool NewBash builds.
type BashOption func(*bashConfig)

// withDefaultTimeout sets the timeout of a call that names none (default
// DefaultBashTimeout). Values below or equal to zero are ignored.
func withDefaultTimeout(d time.Duration) BashOption {
	return func(c *bashConfig) {
		if d > 0 {
			c.defaultTimeout = d
		}
	}
}

// WithMaxTimeout caps every call's timeout, the default one included
// (the bot's BASH_TIMEOUT_MAX). Zero or less means no cap.
func WithMaxTimeout(d time.Duration) BashOption {
	return func(c *bashConfig) { c.maxTimeout = max(d, 0) }
}

// WithKillGrace sets how long a timed-out or cancelled command's process
// group has between SIGTERM and SIGKILL (default DefaultKillGrace). Keep it
// below the agent's abort grace, so a cancelled turn still gets the output.
// Negative values are ignored.
func WithKillGrace(d time.Duration) BashOption {
	return func(c *bashConfig) {
		if d >= 0 {
			c.killGrace = d
		}
	}
}

// withPipeGrace sets how long the tool waits, once the shell has exited,
// for background processes to release the output pipe before it kills the
// command's process group (default DefaultPipeGrace). Negative values are
// ignored.
func withPipeGrace(d time.Duration) BashOption {
	return func(c *bashConfig) {
		if d >= 0 {
			c.pipeGrace = d
		}
	}
}

// withTailLimits sets how much of the output's tail a result keeps: at most
// maxLines lines and maxBytes bytes, whichever is smaller (defaults
// DefaultMaxLines and DefaultMaxBytes). Values below 1 leave a limit as it
// is.
func withTailLimits(maxLines, maxBytes int) BashOption {
	return func(c *bashConfig) {
		if maxLines > 0 {
			c.maxLines = maxLines
		}
		if maxBytes > 0 {
			c.maxBytes = maxBytes
		}
	}
}

// withProgressInterval sets the shortest time between two progress
// snapshots (default DefaultProgressInterval). Zero or less turns progress
// reports off.
func withProgressInterval(d time.Duration) BashOption {
	return func(c *bashConfig) { c.progressInterval = d }
}

// withSpillLimits bounds the files the full outputs are saved in
// (<workspace>/.tmp/bash-*.log): each holds at most maxBytes bytes (the
// output's first ones; the result says so), and before a new one is
// created, those older than maxAge are removed and then the oldest, so that
// at most maxFiles remain with the new one (defaults DefaultSpillMaxBytes,
// DefaultSpillMaxAge, DefaultSpillMaxFiles). Values below 1 leave a limit
// as it is.
func withSpillLimits(maxBytes int64, maxAge time.Duration, maxFiles int) BashOption {
	return func(c *bashConfig) {
		if maxBytes > 0 {
			c.spillMaxBytes = maxBytes
		}
		if maxAge > 0 {
			c.spillMaxAge = maxAge
		}
		if maxFiles > 0 {
			c.spillMaxFiles = maxFiles
		}
	}
}

// withInspectLimit sets how many decompressed bytes send_file reads from a
// file's containers before it refuses the file as one it cannot check;
// values below one are ignored.
func withInspectLimit(n int) BashOption {
	return func(c *bashConfig) {
		if n > 0 {
			c.inspectLimit = n
		}
	}
}

package scheduler

import (
	"log/slog"
	"time"
)

// The defaults of the options.
const (
	// DefaultScriptTimeout bounds a watcher script's run.
	DefaultScriptTimeout = 60 * time.Second
	// DefaultOutputLimit caps the watcher output put to the model, in bytes.
	DefaultOutputLimit = 16 << 10
	// DefaultMaxJobs is how many jobs one chat may have.
	DefaultMaxJobs = 50
	// DefaultMinInterval is the shortest interval a recurring schedule may
	// have: once a minute, as often as a 5-field cron expression can fire.
	DefaultMinInterval = time.Minute
	// defaultMaxReported is how many one-shot jobs a restart cut short
	// one start-up tells their chats of: as many as one chat may have
	// jobs. The file is the agent's to write, and each notice is a send
	// of the bot's.
	defaultMaxReported = DefaultMaxJobs
	// defaultKillGrace is how long a timed-out script's group has between
	// SIGTERM and SIGKILL.
	defaultKillGrace = 5 * time.Second
)

// config is what the options set.
type config struct {
	now           func() time.Time
	workspace     string
	scriptTimeout time.Duration
	killGrace     time.Duration
	outputLimit   int
	maxJobs       int
	minInterval   time.Duration
	logger        *slog.Logger
	// saveFile writes the jobs file (saveJobs); tests replace it to make a
	// save fail.
	saveFile func(path string, jobs []Job) error
	// reportPause is the first pause between the rounds of tries of the
	// start-up reports of one-shot jobs a restart cut short
	// (defaultReportPause); tests shorten it.
	reportPause time.Duration
	// maxReported bounds the one-shot jobs a restart cut short that one
	// start-up tells (defaultMaxReported); tests lower it.
	maxReported int
	// onPass, when set, is called after every pass of the firing loop
	// with the time the pass read from the clock and how many runs it
	// started, so that tests wait for a pass instead of sleeping.
	onPass func(now time.Time, fired int)
}

// Option configures a Scheduler built by New.
type Option func(*config)

// withClock sets the clock the scheduler reads (default time.Now), for
// tests.
func withClock(now func() time.Time) Option {
	return func(c *config) {
		if now != nil {
			c.now = now
		}
	}
}

// WithWorkspace sets the working directory of watcher scripts (default:
// the process's working directory at New).
func WithWorkspace(dir string) Option {
	return func(c *config) { c.workspace = dir }
}

// withScriptTimeout bounds every watcher run (default
// DefaultScriptTimeout); values below 1ns are ignored.
func withScriptTimeout(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.scriptTimeout = d
		}
	}
}

// WithLogger sets the logger (default: the agent's, given at activation).
func WithLogger(l *slog.Logger) Option {
	return func(c *config) { c.logger = l }
}

// withOutputLimit caps the watcher output put to the model, in bytes
// (default DefaultOutputLimit); values below 1 are ignored.
func withOutputLimit(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.outputLimit = n
		}
	}
}

// withMaxJobs sets how many jobs one chat may have (default
// DefaultMaxJobs); values below 1 are ignored.
func withMaxJobs(n int) Option {
	return func(c *config) {
		if n > 0 {
			c.maxJobs = n
		}
	}
}

// withMinInterval sets the shortest interval a recurring schedule may have
// (default DefaultMinInterval); tests lower it to fire every second.
// Values below 1ns are ignored.
func withMinInterval(d time.Duration) Option {
	return func(c *config) {
		if d > 0 {
			c.minInterval = d
		}
	}
}

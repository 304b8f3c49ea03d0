package mcp

import (
	"log/slog"
	"time"

	"github.com/volcanic/telegram-agent/internal/backoff"
)

// Defaults of the extension's options.
const (
	// DefaultDiscoveryTimeout bounds the start (or, for a Streamable HTTP
	// server, the connection), handshake and tool listing of one server at
	// its first discovery attempt, and the start (connection) of a
	// session's server. Each later attempt may take twice as long as the
	// one before, up to DefaultDiscoveryTimeoutMax: a cold npx download
	// on a slow host gets its time.
	DefaultDiscoveryTimeout = 30 * time.Second
	// DefaultDiscoveryTimeoutMax is the longest a later discovery attempt
	// may take.
	DefaultDiscoveryTimeoutMax = 5 * time.Minute
	// DefaultRetryFirst is how long discovery waits before trying a server
	// again after its first attempt failed; the wait doubles with every
	// further failure, up to DefaultRetryMax.
	DefaultRetryFirst = time.Second
	// DefaultRetryMax is the longest wait between two discovery attempts.
	DefaultRetryMax = 5 * time.Minute
	// DefaultIdleTimeout stops a session's server that had no call for so
	// long.
	DefaultIdleTimeout = 15 * time.Minute
	// DefaultStopGrace is how long a server may take to exit once its stdin
	// is closed, before it is signalled and then killed.
	DefaultStopGrace = 2 * time.Second
	// DefaultCallTimeout bounds one tool call of a session's server.
	DefaultCallTimeout = 5 * time.Minute
	// DefaultReconnectFirst is how long a session waits before trying a
	// server again after it could not be started or connected to; the
	// wait doubles with every further failure, up to
	// DefaultReconnectMax (a Retry-After the server sent is waited whole).
	DefaultReconnectFirst = time.Second
	// DefaultReconnectMax is the longest wait between two attempts to
	// start or connect to a session's server.
	DefaultReconnectMax = time.Minute
)

// options holds what the Options set.
type options struct {
	discoveryTimeout time.Duration
	idleTimeout      time.Duration
	stopGrace        time.Duration
	callTimeout      time.Duration
	logger           *slog.Logger
	tempDir          string
	serverHome       string
	agentWritable    []string
	reconnectFirst   time.Duration
	reconnectMax     time.Duration
	retryFirst       time.Duration
	retryMax         time.Duration
	// onStatus is called with every server's status after each change.
	onStatus func([]ServerStatus)
	// clock is the clock of the back-offs, a seam for tests.
	clock backoff.Clock
}

// now returns the back-offs' clock's time.
func (o *options) now() time.Time { return o.clock.Now() }

// Option configures an Extension built by New.
type Option func(*options)

// WithDiscoveryTimeout sets how long one server may take to start and list
// its tools at its first discovery attempt (later ones may take longer,
// see DefaultDiscoveryTimeout), and to start for a session (default
// DefaultDiscoveryTimeout); values below 1ns are ignored.
func WithDiscoveryTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.discoveryTimeout = d
		}
	}
}

// withIdleTimeout sets how long a session's server may go without a call
// before it is stopped (default DefaultIdleTimeout); zero or less never
// stops it for idleness.
func withIdleTimeout(d time.Duration) Option {
	return func(o *options) { o.idleTimeout = d }
}

// withStopGrace sets how long a stopped server may take to exit after its
// stdin is closed, before SIGTERM and then SIGKILL (default
// DefaultStopGrace); values below 1ns are ignored.
func withStopGrace(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.stopGrace = d
		}
	}
}

// withCallTimeout sets how long one tool call may wait for the server's
// answer (default DefaultCallTimeout); values below 1ns are ignored. A
// server that does not answer in time is killed (its whole process group),
// the call gets an error result saying so, and the next call starts the
// server again.
func withCallTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.callTimeout = d
		}
	}
}

// WithLogger sets the logger (default: the one the agent hands the
// extension at activation).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) { o.logger = l }
}

// WithServerHome sets the directory every stdio server gets as its HOME,
// npm's cache and global prefix, pip's user base and the XDG cache, and a
// server started with npx or npm as its working directory (default: none;
// servers keep the bot's, and run in the session's workspace). It must be
// a place the agent's processes cannot write, such as a directory in the
// agent dir: a server loads code from these places (npx runs a package it
// finds in node_modules under its working directory and reuses what its
// cache holds), with the credentials its env passes. Each server's
// sandbox view may write it; it is made, mode 0700, when a server starts.
func WithServerHome(dir string) Option {
	return func(o *options) { o.serverHome = dir }
}

// WithAgentWritable names the directories the agent's processes may write,
// the workspace first (a session's server runs there, so a relative script
// path is read there), then the sandbox's temporary directory and the
// operator's writable additions. A stdio server whose command or script
// lies in one of them is started all the same, with a warning at
// activation: the agent could replace it and have the next session's
// server run its code, with the server's env. Default: none, no warning.
func WithAgentWritable(dirs ...string) Option {
	return func(o *options) { o.agentWritable = dirs }
}

// withTempDir sets where discovery creates the servers' temporary working
// directories (default: os.TempDir()).
func withTempDir(dir string) Option {
	return func(o *options) { o.tempDir = dir }
}

// withReconnectBackoff sets how long a session waits before trying a
// server again after a failed start or connection attempt: first,
// doubling with every further failure up to most (defaults
// DefaultReconnectFirst and DefaultReconnectMax). Calls made meanwhile get
// an error result at once. Values below 1ns are ignored; most is raised to
// first when it is shorter.
func withReconnectBackoff(first, most time.Duration) Option {
	return func(o *options) {
		if first > 0 {
			o.reconnectFirst = first
		}
		if most > 0 {
			o.reconnectMax = most
		}
		o.reconnectMax = max(o.reconnectMax, o.reconnectFirst)
	}
}

// WithDiscoveryRetry sets how long discovery waits before trying again a
// server that failed: first, doubling with every further failure up to most
// (defaults DefaultRetryFirst and DefaultRetryMax), with a fifth of each
// wait random. Values below 1ns are ignored; most is raised to first when
// it is shorter.
func WithDiscoveryRetry(first, most time.Duration) Option {
	return func(o *options) {
		if first > 0 {
			o.retryFirst = first
		}
		if most > 0 {
			o.retryMax = most
		}
		o.retryMax = max(o.retryMax, o.retryFirst)
	}
}

// WithStatusHook has f called with every configured server's status (as
// [Extension.Servers] returns it) whenever one changes: a server starting,
// ready, failed or tried again. f runs on the extension's goroutines, one
// call at a time; it must not call back into the extension.
func WithStatusHook(f func([]ServerStatus)) Option {
	return func(o *options) { o.onStatus = f }
}

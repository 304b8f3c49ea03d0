package hardening

import (
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"syscall"
)

// The Linux values of the prctl options and the resource Apply uses. They are
// spelled out here so the platform-neutral hardener compiles everywhere; a
// Linux test checks them against golang.org/x/sys/unix.
const (
	prGetDumpable = 3
	prSetDumpable = 4
	rlimitCore    = 4
)

// Log messages that operators and tests look for.
const (
	msgHardened       = "Host process hardened: not dumpable"
	msgDisabled       = "Host process hardening disabled: agent processes can read this process's environment"
	msgNotLinux       = "Host process hardening skipped: only Linux has a dumpable flag to clear"
	msgRoot           = "Host process runs as root: root can read every process's environment, hardened or not; run the bot as an unprivileged user"
	msgSetFailed      = "Host process hardening failed: prctl(PR_SET_DUMPABLE, 0)"
	msgVerifyFailed   = "Host process hardening failed: PR_GET_DUMPABLE could not be read"
	msgStillDumpable  = "Host process hardening failed: the process is still dumpable"
	msgCoreLimit      = "Host process hardening: RLIMIT_CORE could not be set to 0"
	msgTracebackCrash = "GOTRACEBACK=crash is set but the host process is hardened: a crash writes no core dump"
)

// hardener holds the logic of Apply behind seams, so that every branch can be
// tested without hardening the test process.
type hardener struct {
	// once makes apply idempotent; Apply passes the package's flag.
	once *sync.Once
	// isLinux selects the Linux path; elsewhere apply only logs at Debug.
	isLinux bool
	// prctl calls prctl(2) with option and arg2 (the other arguments 0) and
	// returns the call's result.
	prctl func(option int, arg2 uintptr) (int, error)
	// setrlimit sets both the soft and the hard limit of resource.
	setrlimit func(resource int, cur, max uint64) error
	// geteuid returns the effective user id.
	geteuid func() int
	// getenv reads a variable of the process environment.
	getenv func(key string) string
}

// apply runs harden once per h.once; later calls do nothing.
func (h hardener) apply(enabled bool, logger *slog.Logger) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	h.once.Do(func() { h.harden(enabled, logger) })
}

// harden does the work of Apply. It never panics: a panicking seam is logged
// like a failing one.
func (h hardener) harden(enabled bool, logger *slog.Logger) {
	if !h.isLinux {
		logger.Debug(msgNotLinux)
		return
	}
	if euid, err := call(func() (int, error) { return h.geteuid(), nil }); err == nil && euid == 0 {
		logger.Warn(msgRoot)
	}
	if !enabled {
		logger.Warn(msgDisabled)
		return
	}
	if h.clearDumpable(logger) {
		logger.Info(msgHardened)
	}
	if _, err := call(func() (int, error) { return 0, h.setrlimit(rlimitCore, 0, 0) }); err != nil {
		logger.Warn(msgCoreLimit, errorAttrs(err)...)
	}
	if v, err := call(func() (string, error) { return h.getenv("GOTRACEBACK"), nil }); err == nil && v == "crash" {
		logger.Warn(msgTracebackCrash)
	}
}

// clearDumpable sets the dumpable flag to 0 and reads it back. It reports
// whether the process is verified not dumpable, and logs a Warning otherwise.
func (h hardener) clearDumpable(logger *slog.Logger) bool {
	if _, err := call(func() (int, error) { return h.prctl(prSetDumpable, 0) }); err != nil {
		logger.Warn(msgSetFailed, errorAttrs(err)...)
		return false
	}
	on, err := dumpable(h.prctl)
	if err != nil {
		logger.Warn(msgVerifyFailed, errorAttrs(err)...)
		return false
	}
	if on {
		logger.Warn(msgStillDumpable)
		return false
	}
	return true
}

// dumpable reads the dumpable flag through prctl. Any non-zero value
// (1, or 2 under suid_dumpable) counts as dumpable.
func dumpable(prctl func(option int, arg2 uintptr) (int, error)) (bool, error) {
	v, err := call(func() (int, error) { return prctl(prGetDumpable, 0) })
	if err != nil {
		return false, fmt.Errorf("read dumpable flag: %w", err)
	}
	return v != 0, nil
}

// call runs f and turns a panic into an error, so that no seam can panic out
// of Apply.
func call[T any](f func() (T, error)) (v T, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("panic: %v", r)
		}
	}()
	return f()
}

// errorAttrs describes err for a log record: the error, and its errno when
// it carries one.
func errorAttrs(err error) []any {
	attrs := []any{slog.Any("error", err)}
	if errno, ok := errors.AsType[syscall.Errno](err); ok {
		attrs = append(attrs, slog.Int("errno", int(errno)))
	}
	return attrs
}

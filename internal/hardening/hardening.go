// Package hardening makes the host process unreadable to its own children on
// Linux: an agent process runs as the bot's OS user, so without it
// `cat /proc/$PPID/environ` would hand the agent every secret the host holds.
//
// Apply clears the process's dumpable flag with prctl(PR_SET_DUMPABLE, 0),
// verifies it with PR_GET_DUMPABLE and sets RLIMIT_CORE to 0. The kernel then
// makes /proc/<pid>/environ, mem and similar files owned by root and refuses
// ptrace, so a same-user process can no longer read the host's environment or
// memory. Children are unaffected: execve resets the flag.
package hardening

import (
	"log/slog"
	"sync"
)

// applied is the package's only mutable state: the first call to Apply wins.
var applied sync.Once

// Apply hardens the host process when enabled is true, and logs what it did
// to logger (nil discards). It is idempotent: the first call decides, and
// later calls do nothing, whatever their arguments. A failure is logged as a
// Warning and never stops start-up, since hardening is defence in depth.
// Outside Linux it logs one Debug line and does nothing else.
func Apply(enabled bool, logger *slog.Logger) {
	system(&applied).apply(enabled, logger)
}

// Dumpable reports whether the current process's dumpable flag is set, as
// read by prctl(PR_GET_DUMPABLE). A hardened process reports false. Outside
// Linux it returns an error wrapping errors.ErrUnsupported.
func Dumpable() (bool, error) {
	return dumpable(system(nil).prctl)
}

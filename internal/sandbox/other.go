//go:build !linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
)

// errUnsupported is why nothing of the sandbox works outside Linux.
var errUnsupported = errors.New("sandbox: only Linux has Landlock")

// ABI returns 0: only Linux has Landlock.
func ABI() int { return 0 }

// IsLaunch reports whether args ask for the launcher mode.
func IsLaunch(args []string) bool { return len(args) == 3 && args[1] == LaunchArg }

// Launch reports that the launcher needs Linux.
func Launch(_ []string, stderr io.Writer) int {
	fmt.Fprintf(stderr, "agent sandbox: %v\n", errUnsupported)
	return 126
}

// Wrap makes cmd fail to start: a sandboxed command cannot start outside
// Linux.
func (l *Launcher) Wrap(cmd *exec.Cmd, _ Paths) {
	if cmd.Err == nil {
		cmd.Err = errUnsupported
	}
}

// OpenFile refuses every path outside Linux, where openat2 does not exist.
func (v View) OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	return nil, &os.PathError{Op: "open", Path: path, Err: errUnsupported}
}

// pool is empty outside Linux: no launcher is started ahead.
type pool struct{}

// Start starts cmd, which Wrap made fail: a sandboxed command cannot
// start outside Linux.
func (l *Launcher) Start(cmd *exec.Cmd) error { return cmd.Start() }

// Close does nothing: outside Linux no launcher is started ahead.
func (l *Launcher) Close() error { return nil }

// refill does nothing outside Linux.
func (l *Launcher) refill() {}

// waitWarm reports that outside Linux no launcher is started ahead.
func (l *Launcher) waitWarm(context.Context) error { return errUnsupported }

// ReapLeftovers reports that outside Linux there is no launcher to leave
// anything behind.
func ReapLeftovers(context.Context) error { return errUnsupported }

// Seccomp reports that outside Linux there is no seccomp filter.
func Seccomp() SeccompSupport { return SeccompNone }

// DetectEgress reports that outside Linux the network cannot be confined.
func DetectEgress(string) (EgressTier, error) { return EgressNone, errUnsupported }

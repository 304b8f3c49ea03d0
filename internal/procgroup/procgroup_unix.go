//go:build unix

package procgroup

import (
	"errors"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// pollInterval is how often Stop checks whether the group is gone.
const pollInterval = 10 * time.Millisecond

// Set makes cmd, once started, the leader of a new process group, so the
// command and everything it starts can be signalled at once. When cmd was
// made by exec.CommandContext (its Cancel is set), Set also makes the
// cancellation kill the whole group with SIGKILL instead of the process
// alone. Call it before cmd.Start.
func Set(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Setpgid = true
	if cmd.Cancel != nil {
		cmd.Cancel = func() error {
			if cmd.Process == nil {
				return nil
			}
			return unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
		}
	}
}

// Terminate sends SIGTERM to the process group cmd leads. A command that
// has not started, or a group that is gone, is not an error.
func Terminate(cmd *exec.Cmd) {
	signal(cmd, unix.SIGTERM)
}

// Kill sends SIGKILL to the process group cmd leads, whatever is left of
// it. The kernel does not reuse a pid while a group carries it, so this
// reaches only cmd's own descendants, even after cmd was waited for. A
// command that has not started, or a group that is gone, is not an error.
func Kill(cmd *exec.Cmd) {
	signal(cmd, unix.SIGKILL)
}

// Stop sends SIGTERM to the process group cmd leads, waits up to grace for
// the group to be gone, then sends SIGKILL to whatever is left. A group that
// is already gone is not an error. The group's leader counts as alive until
// it is waited for, so Stop returns early only when something waits for cmd
// meanwhile.
func Stop(cmd *exec.Cmd, grace time.Duration) {
	if cmd.Process == nil {
		return
	}
	pgid := cmd.Process.Pid
	if err := unix.Kill(-pgid, unix.SIGTERM); errors.Is(err, unix.ESRCH) {
		return
	}
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
wait:
	for alive(pgid) {
		select {
		case <-tick.C:
		case <-deadline.C:
			break wait
		}
	}
	if alive(pgid) {
		_ = unix.Kill(-pgid, unix.SIGKILL)
	}
}

// signal sends sig to the process group cmd leads, ignoring ESRCH.
func signal(cmd *exec.Cmd, sig unix.Signal) {
	if cmd.Process == nil || cmd.Process.Pid <= 0 {
		return
	}
	_ = unix.Kill(-cmd.Process.Pid, sig)
}

// alive reports whether any process, zombies included, is left in the
// group pgid.
func alive(pgid int) bool {
	err := unix.Kill(-pgid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

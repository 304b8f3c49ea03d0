//go:build unix

package tools

import (
	"errors"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// groupPollInterval is how often terminateGroup checks whether the group
// is gone.
const groupPollInterval = 10 * time.Millisecond

// setOwnProcessGroup makes cmd the leader of a new process group, so the
// command and everything it starts can be signalled at once.
func setOwnProcessGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// groupAlive reports whether any process, zombies included, is left in the
// group pgid.
func groupAlive(pgid int) bool {
	err := unix.Kill(-pgid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// terminateGroup sends SIGTERM to the process group cmd leads, waits up to
// grace for the group to be gone, then sends SIGKILL to whatever is left.
// A group that is already gone is not an error.
func terminateGroup(cmd *exec.Cmd, grace time.Duration) {
	if cmd.Process == nil {
		return
	}
	pgid := cmd.Process.Pid
	if err := unix.Kill(-pgid, unix.SIGTERM); errors.Is(err, unix.ESRCH) {
		return
	}
	deadline := time.NewTimer(grace)
	defer deadline.Stop()
	tick := time.NewTicker(groupPollInterval)
	defer tick.Stop()
wait:
	for groupAlive(pgid) {
		select {
		case <-tick.C:
		case <-deadline.C:
			break wait
		}
	}
	if groupAlive(pgid) {
		_ = unix.Kill(-pgid, unix.SIGKILL)
	}
}

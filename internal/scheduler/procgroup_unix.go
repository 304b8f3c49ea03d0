//go:build unix

package scheduler

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup makes cmd start in a process group of its own.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
}

// signalGroup sends sig to the process group p leads.
func signalGroup(p *os.Process, sig syscall.Signal) {
	_ = syscall.Kill(-p.Pid, sig) // ESRCH once the group is gone
}

// terminate and kill are the signals of a timed-out script's group.
const (
	terminate = syscall.SIGTERM
	kill      = syscall.SIGKILL
)

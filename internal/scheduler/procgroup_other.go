//go:build !unix

package scheduler

import (
	"os"
	"os/exec"
	"syscall"
)

// ownGroup does nothing where there are no Unix process groups.
func ownGroup(*exec.Cmd) {}

// signalGroup kills the process itself: without process groups, a signal
// other than a kill is not delivered.
func signalGroup(p *os.Process, _ syscall.Signal) {
	_ = p.Kill()
}

// terminate and kill are the signals of a timed-out script's group.
const (
	terminate = syscall.SIGKILL
	kill      = syscall.SIGKILL
)

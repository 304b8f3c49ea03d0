//go:build !unix

package procgroup

import (
	"os/exec"
	"time"
)

// Set leaves cmd as it is: without process groups, the default cancel of
// exec.CommandContext (killing the process) is all there is.
func Set(cmd *exec.Cmd) {}

// Terminate kills the process itself: without process groups, a signal
// other than a kill is not delivered.
func Terminate(cmd *exec.Cmd) { kill(cmd) }

// Kill kills the process itself; its children may survive it.
func Kill(cmd *exec.Cmd) { kill(cmd) }

// Stop kills the process itself at once; its children may survive it.
func Stop(cmd *exec.Cmd, _ time.Duration) { kill(cmd) }

// kill kills cmd's process, if it started.
func kill(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

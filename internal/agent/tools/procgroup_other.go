//go:build !unix

package tools

import (
	"os/exec"
	"time"
)

// setOwnProcessGroup does nothing where process groups do not exist.
func setOwnProcessGroup(*exec.Cmd) {}

// terminateGroup kills the shell itself where process groups do not exist;
// its children may survive it there.
func terminateGroup(cmd *exec.Cmd, _ time.Duration) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

//go:build !unix

package mcp

import "os/exec"

// ownProcessGroup leaves cmd as it is: without Unix process groups, the
// default cancel (killing the process) is all there is.
func ownProcessGroup(cmd *exec.Cmd) {}

// killGroup does nothing without Unix process groups.
func killGroup(pid int) {}

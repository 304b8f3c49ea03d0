//go:build !unix

package agent

import "os/exec"

// ownProcessGroup leaves cmd as it is: outside Unix, cancellation kills the
// process itself only.
func ownProcessGroup(cmd *exec.Cmd) {}

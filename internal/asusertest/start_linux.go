package asusertest

import (
	"bytes"
	"fmt"
	"os/exec"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// Drop makes cmd start as UID:GID, keeping the other fields of its
// SysProcAttr. It needs root: start cmd with [Start], [Run] or
// [CombinedOutput], which keep the test runner dumpable.
func Drop(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Credential = &syscall.Credential{Uid: UID, Gid: GID}
}

// Start starts cmd and sets the test runner's dumpable flag again right
// after, since a child that starts with other credentials clears it (see
// the package documentation). A cleanup fails the test if the runner is not
// dumpable when the test ends. Start returns cmd.Start's error.
func Start(t testing.TB, cmd *exec.Cmd) error {
	t.Helper()
	err := cmd.Start()
	if perr := unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0); perr != nil {
		t.Errorf("asusertest: restore the test runner's dumpable flag: %v", perr)
	}
	t.Cleanup(func() { checkDumpable(t) })
	return err
}

// Run starts cmd with [Start] and waits for it to exit, as cmd.Run does.
func Run(t testing.TB, cmd *exec.Cmd) error {
	t.Helper()
	if err := Start(t, cmd); err != nil {
		return err
	}
	return cmd.Wait()
}

// CombinedOutput runs cmd with [Run] and returns its standard output and
// standard error together, as cmd.CombinedOutput does.
func CombinedOutput(t testing.TB, cmd *exec.Cmd) ([]byte, error) {
	t.Helper()
	if cmd.Stdout != nil || cmd.Stderr != nil {
		return nil, fmt.Errorf("asusertest: combined output of %s: Stdout or Stderr already set", cmd.Path)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := Run(t, cmd)
	return out.Bytes(), err
}

// checkDumpable fails the test unless the test runner is dumpable, and then
// makes it dumpable again, so that a later check (of this test or another)
// does not report the same fault.
func checkDumpable(t testing.TB) {
	t.Helper()
	d, err := dumpable()
	switch {
	case err != nil:
		t.Errorf("asusertest: %v", err)
	case !d:
		t.Errorf("asusertest: the test runner is not dumpable at the end of the test (a child started as uid %d clears the flag)", UID)
		if err := unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0); err != nil {
			t.Errorf("asusertest: restore the test runner's dumpable flag: %v", err)
		}
	}
}

// dumpable reports the test runner's dumpable flag.
func dumpable() (bool, error) {
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil {
		return false, fmt.Errorf("read the test runner's dumpable flag: %w", err)
	}
	return v == 1, nil
}

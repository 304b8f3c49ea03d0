//go:build !linux

package hardening

import (
	"errors"
	"runtime"
	"testing"
)

// runHelperMode has no helper modes outside Linux.
func runHelperMode() (int, bool) { return 0, false }

func TestKernelRefusesSameUserReads(t *testing.T) {
	t.Skipf("the dumpable flag and /proc/<pid>/environ are Linux-only; this is %s", runtime.GOOS)
}

func TestDumpableUnsupported(t *testing.T) {
	if _, err := Dumpable(); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Dumpable() error = %v, want one wrapping errors.ErrUnsupported", err)
	}
}

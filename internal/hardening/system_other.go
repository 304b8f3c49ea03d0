//go:build !linux

package hardening

import (
	"errors"
	"fmt"
	"os"
	"sync"
)

// system returns the hardener for an OS without a dumpable flag: apply only
// logs at Debug, and the seams report errors.ErrUnsupported.
func system(once *sync.Once) hardener {
	unsupported := fmt.Errorf("dumpable flag: %w", errors.ErrUnsupported)
	return hardener{
		once:      once,
		isLinux:   false,
		prctl:     func(int, uintptr) (int, error) { return 0, unsupported },
		setrlimit: func(int, uint64, uint64) error { return unsupported },
		geteuid:   os.Geteuid,
		getenv:    os.Getenv,
	}
}

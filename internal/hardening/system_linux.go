package hardening

import (
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// system returns the hardener over the real kernel, guarded by once.
func system(once *sync.Once) hardener {
	return hardener{
		once:    once,
		isLinux: true,
		prctl: func(option int, arg2 uintptr) (int, error) {
			return unix.PrctlRetInt(option, arg2, 0, 0, 0)
		},
		setrlimit: func(resource int, cur, max uint64) error {
			return unix.Setrlimit(resource, &unix.Rlimit{Cur: cur, Max: max})
		},
		geteuid: os.Geteuid,
		getenv:  os.Getenv,
	}
}

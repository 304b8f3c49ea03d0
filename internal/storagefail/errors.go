package storagefail

import (
	"errors"
	"syscall"
)

// Is reports whether err says a file could not be written for want of
// space or of a writable disk.
func Is(err error) bool {
	for _, target := range []error{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EIO} {
		if errors.Is(err, target) {
			return true
		}
	}
	return false
}

//go:build linux

package sandbox

import (
	"fmt"
	"math"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// closeRangeCloexec is close_range(2)'s CLOSE_RANGE_CLOEXEC flag (Linux
// 5.11), which golang.org/x/sys/unix does not name.
const closeRangeCloexec = 1 << 2

// cloexecFrom marks every descriptor of the launcher from first on
// close-on-exec, so that the command inherits only those the launcher
// hands it (which syscall.ForkExec puts in place, clearing the flag). The
// launcher itself inherits from the bot whatever the bot inherited without
// the flag (a supervisor's pipe, a socket of its own): the command must
// not. Kernels before 5.11 get the same from /proc/self/fd.
func cloexecFrom(first int) error {
	if unix.CloseRange(uint(first), math.MaxUint32, closeRangeCloexec) == nil {
		return nil
	}
	dir, err := os.Open("/proc/self/fd")
	if err != nil {
		return fmt.Errorf("list the descriptors: %w", err)
	}
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return fmt.Errorf("list the descriptors: %w", err)
	}
	for _, name := range names {
		fd, err := strconv.Atoi(name)
		if err != nil || fd < first || fd == int(dir.Fd()) {
			continue
		}
		unix.CloseOnExec(fd)
	}
	return nil
}

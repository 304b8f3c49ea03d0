//go:build unix

package tools

import (
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// maxAfterCut bounds what readBuffered takes: a process that escaped the
// group (setsid) may keep writing while it reads, and the cut must end.
const maxAfterCut = 4 * readChunk

// readBuffered copies into sink what the pipe r holds at this moment,
// without waiting for more and without regard to r's deadline. The pipe is
// non-blocking, so a read finding it empty returns at once.
func readBuffered(sink io.Writer, r *os.File, buf []byte) {
	rc, err := r.SyscallConn()
	if err != nil {
		return
	}
	for total := 0; total < maxAfterCut; {
		n := 0
		cerr := rc.Control(func(fd uintptr) {
			for {
				n, err = unix.Read(int(fd), buf)
				if err != unix.EINTR {
					return
				}
			}
		})
		if cerr != nil || err != nil || n <= 0 {
			return
		}
		sink.Write(buf[:n])
		total += n
	}
}

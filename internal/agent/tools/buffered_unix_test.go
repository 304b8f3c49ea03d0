//go:build unix

package tools

import (
	"bytes"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestCopyOutputKeepsWhatThePipeHeldAtTheCut is the loaded-machine case:
// the command wrote its output and exited, but the reader had not run yet
// when the grace ran out and the pipe was cut. What the pipe holds must
// still reach the sink; only the wait for more is cut.
func TestCopyOutputKeepsWhatThePipeHeldAtTheCut(t *testing.T) {
	tests := []struct {
		name string
		size int
		want int
	}{
		{"short", 40, 40},
		{"several reads", 3*readChunk + 17, 3*readChunk + 17},
		{"bounded", 6 * readChunk, maxAfterCut},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pr, pw, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer pr.Close()
			defer pw.Close()
			// Room for the whole output, so it is written before the cut
			// as a command that exited has written it.
			if _, err := unix.FcntlInt(pw.Fd(), unix.F_SETPIPE_SZ, 1<<20); err != nil {
				t.Skipf("cannot grow the pipe (F_SETPIPE_SZ): %v", err)
			}
			if _, err := pw.Write([]byte(strings.Repeat("x", tt.size))); err != nil {
				t.Fatal(err)
			}
			if err := pr.SetReadDeadline(time.Now().Add(-time.Second)); err != nil {
				t.Fatal(err)
			}
			var sink bytes.Buffer
			err = copyOutput(&sink, pr)
			if !errors.Is(err, os.ErrDeadlineExceeded) {
				t.Fatalf("copyOutput error = %v, want the deadline", err)
			}
			if sink.Len() != tt.want {
				t.Fatalf("sink holds %d bytes after the cut, want %d", sink.Len(), tt.want)
			}
			if sink.Len() > 0 && strings.Trim(sink.String(), "x") != "" {
				t.Fatalf("sink holds bytes that were not written")
			}
		})
	}
}

package atomicfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/tmpfstest"
)

// TestAppendFullDisk appends to a log on a real tmpfs that fills up: an
// append that does not fit fails with ENOSPC, whether nothing of it could
// be written or part of it, and leaves the log with exactly the entries
// whose append succeeded; once space is freed, appends work again.
func TestAppendFullDisk(t *testing.T) {
	page := os.Getpagesize()
	tests := []struct {
		name string
		// free is what the disk keeps free: 0 fails the write at once, a
		// page lets part of it in (a short write).
		free int64
	}{
		{"no space at all", 0},
		{"space for part of the line", int64(page)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := tmpfstest.Mount(t, 1<<20)
			path := filepath.Join(d.Dir, "log.jsonl")
			l, _, _, err := openEntries(t, path)
			if err != nil {
				t.Fatal(err)
			}
			kept := []entry{{N: 1, S: "before"}}
			if err := l.Append(kept[0]); err != nil {
				t.Fatal(err)
			}
			sizeBefore := l.Size()
			d.FillBut(tt.free)
			big := entry{N: 2, S: strings.Repeat("x", 3*page)}
			err = l.Append(big)
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("append on a full disk: %v, want ENOSPC", err)
			}
			if info, err := os.Stat(path); err != nil || info.Size() != sizeBefore {
				t.Fatalf("after the failed append the file is %v bytes (err %v), want %d: a torn line was left", info.Size(), err, sizeBefore)
			}
			d.Drain()
			after := entry{N: 3, S: "after"}
			if err := l.Append(after); err != nil {
				t.Fatalf("append after space was freed: %v", err)
			}
			closeAndCheck(t, l, path, append(kept, after))
		})
	}
}

// TestWriteFileFullDisk replaces a file on a real tmpfs that is full: the
// replacement fails with ENOSPC and leaves the old content and no
// temporary file, whether the temporary file got none of the new content
// or part of it.
func TestWriteFileFullDisk(t *testing.T) {
	page := os.Getpagesize()
	for _, free := range []int64{0, int64(page)} {
		d := tmpfstest.Mount(t, 1<<20)
		path := filepath.Join(d.Dir, "state.json")
		if err := WriteFile(path, []byte(`{"old":true}`), 0o600); err != nil {
			t.Fatal(err)
		}
		d.FillBut(free)
		err := WriteFile(path, []byte(`{"new":"`+strings.Repeat("x", 3*page)+`"}`), 0o600)
		if !errors.Is(err, syscall.ENOSPC) {
			t.Fatalf("free %d: WriteFile on a full disk: %v, want ENOSPC", free, err)
		}
		if got, _ := os.ReadFile(path); string(got) != `{"old":true}` {
			t.Errorf("free %d: content after the failed replacement %q, want the old one", free, got)
		}
		if diff := cmp.Diff([]string{"state.json", tmpfstest.BallastFile}, dirEntries(t, d.Dir)); diff != "" {
			t.Errorf("free %d: directory (-want +got):\n%s", free, diff)
		}
	}
}

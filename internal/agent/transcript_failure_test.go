package agent

import (
	"log/slog"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FaultyFile (exported for the external tests) wraps a transcript's file and fails the writes, syncs and
// truncates whose numbers (from 1) it lists. A failed write first writes
// half of its bytes, as a full disk does.
type FaultyFile struct {
	TranscriptFile

	mu                           sync.Mutex
	writes, syncs, truncates     int
	FailWrite, failSync, failCut map[int]bool
	alwaysFailCut                bool
}

func (f *FaultyFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	f.writes++
	fail := f.FailWrite[f.writes]
	f.mu.Unlock()
	if !fail {
		return f.TranscriptFile.Write(p)
	}
	n, err := f.TranscriptFile.Write(p[:len(p)/2])
	if err != nil {
		return n, err
	}
	return n, syscall.ENOSPC
}

func (f *FaultyFile) Sync() error {
	f.mu.Lock()
	f.syncs++
	fail := f.failSync[f.syncs]
	f.mu.Unlock()
	if fail {
		return syscall.EIO
	}
	return f.TranscriptFile.Sync()
}

func (f *FaultyFile) Truncate(size int64) error {
	f.mu.Lock()
	f.truncates++
	fail := f.alwaysFailCut || f.failCut[f.truncates]
	f.mu.Unlock()
	if fail {
		return syscall.EIO
	}
	return f.TranscriptFile.Truncate(size)
}

func TestTranscriptFailedAppend(t *testing.T) {
	tests := []struct {
		name string
		file *FaultyFile
	}{
		{"short write", &FaultyFile{FailWrite: map[int]bool{2: true}}},
		{"failed sync", &FaultyFile{failSync: map[int]bool{2: true}}},
		{"short write, cut fails once", &FaultyFile{FailWrite: map[int]bool{2: true}, failCut: map[int]bool{1: true}}},
		{"two short writes in a row", &FaultyFile{FailWrite: map[int]bool{2: true, 3: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "s.jsonl")
			logger := slog.New(slog.DiscardHandler)
			tr, _, err := openTranscript(path, logger)
			if err != nil {
				t.Fatal(err)
			}
			ff := tt.file
			ff.TranscriptFile = tr.f
			tr.f = ff
			var kept []string
			for _, text := range []string{"a", "b", "c", "d"} {
				if err := tr.appendMessage(Message{Role: RoleUser, Content: []Content{Text(text)}}); err == nil {
					kept = append(kept, text)
				}
			}
			if len(kept) == 4 {
				t.Fatal("no append failed; the fault was not injected")
			}
			if err := tr.close(); err != nil {
				t.Fatal(err)
			}
			tr2, msgs, err := openTranscript(path, logger)
			if err != nil {
				t.Fatalf("reopening after a failed append: %v", err)
			}
			defer tr2.close()
			var got []string
			for _, m := range msgs {
				got = append(got, TextOf(m.Content))
			}
			if diff := cmp.Diff(kept, got); diff != "" {
				t.Errorf("reloaded messages (-want +got):\n%s", diff)
			}
		})
	}
}

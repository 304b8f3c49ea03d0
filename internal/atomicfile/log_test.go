package atomicfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tornMarker is in the lines the tests tear; the log must never show it.
const tornMarker = "torn-content-must-not-be-logged"

// entry is what the tests log.
type entry struct {
	N int    `json:"n"`
	S string `json:"s,omitempty"`
}

// line is e as the log writes it, without the newline.
func line(t *testing.T, e entry) string {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// openEntries opens the log at path, collecting its entries, and returns
// it with them and what it logged (as JSON lines).
func openEntries(t *testing.T, path string) (*Log, []entry, string, error) {
	t.Helper()
	var logs bytes.Buffer
	var got []entry
	l, err := OpenLog(path, 0o600, slog.New(slog.NewJSONHandler(&logs, nil)), func(_ int, b []byte) error {
		var e entry
		if err := json.Unmarshal(b, &e); err != nil {
			return err
		}
		if e.N == 0 {
			return errors.New("no n")
		}
		got = append(got, e)
		return nil
	})
	return l, got, logs.String(), err
}

// closeAndCheck closes l and checks that the log at path then opens with
// want.
func closeAndCheck(t *testing.T, l *Log, path string, want []entry) {
	t.Helper()
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	l2, got, _, err := openEntries(t, path)
	if err != nil {
		t.Fatalf("reopening: %v", err)
	}
	defer l2.Close()
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entries after reopening (-want +got):\n%s", diff)
	}
}

func TestOpenLog(t *testing.T) {
	a, b := entry{N: 1, S: "a"}, entry{N: 2, S: "b"}
	tornLine := func(t *testing.T) string {
		full := line(t, entry{N: 3, S: tornMarker})
		return full[:strings.Index(full, tornMarker)+len(tornMarker)]
	}
	tests := []struct {
		name    string
		content func(t *testing.T) string
		want    []entry
		// wantTorn is the line number of a dropped torn line, 0 for none.
		wantTorn int
		wantErr  string
	}{
		{name: "missing", content: nil},
		{name: "empty", content: func(t *testing.T) string { return "" }},
		{name: "two lines", content: func(t *testing.T) string { return line(t, a) + "\n" + line(t, b) + "\n" }, want: []entry{a, b}},
		{name: "blank lines", content: func(t *testing.T) string { return "\n" + line(t, a) + "\n\n  \n" + line(t, b) + "\n\n" }, want: []entry{a, b}},
		{name: "last line without newline", content: func(t *testing.T) string { return line(t, a) + "\n" + line(t, b) }, want: []entry{a, b}},
		{name: "torn last line", content: func(t *testing.T) string { return line(t, a) + "\n" + tornLine(t) }, want: []entry{a}, wantTorn: 2},
		{name: "torn last line with a newline", content: func(t *testing.T) string { return line(t, a) + "\n" + tornLine(t) + "\n" }, want: []entry{a}, wantTorn: 2},
		{name: "only a torn line", content: func(t *testing.T) string { return tornLine(t) }, wantTorn: 1},
		{name: "corrupt middle line", content: func(t *testing.T) string { return line(t, a) + "\n{not json\n" + line(t, b) + "\n" }, wantErr: "line 2"},
		{name: "rejected last line", content: func(t *testing.T) string { return line(t, a) + "\n" + `{"s":"x"}` }, wantErr: "line 2 does not parse: no n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log.jsonl")
			var before string
			if tt.content != nil {
				before = tt.content(t)
				if err := os.WriteFile(path, []byte(before), 0o600); err != nil {
					t.Fatal(err)
				}
			}
			l, got, logs, err := openEntries(t, path)
			if strings.Contains(logs, tornMarker) {
				t.Error("the log shows the torn line's content")
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("err = %v, want one naming %s and %q", err, path, tt.wantErr)
				}
				if after, _ := os.ReadFile(path); string(after) != before {
					t.Error("a log that failed to open was changed")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("entries (-want +got):\n%s", diff)
			}
			switch {
			case tt.wantTorn == 0 && logs != "":
				t.Errorf("the open logged %s, want nothing", logs)
			case tt.wantTorn != 0 && !strings.Contains(logs, fmt.Sprintf(`"line":%d`, tt.wantTorn)):
				t.Errorf("the open logged %s, want a warning about line %d", logs, tt.wantTorn)
			}
			// An append after whatever was there gives a log that opens
			// with the new entry last.
			c := entry{N: 9, S: "new"}
			if err := l.Append(c); err != nil {
				t.Fatal(err)
			}
			closeAndCheck(t, l, path, append(tt.want, c))
		})
	}
}

// faultyFile wraps a log's file and fails the writes, fsyncs and
// truncations whose numbers (from 1) it lists. A failed write first writes
// half of its bytes, as a full disk does.
type faultyFile struct {
	file

	mu                           sync.Mutex
	writes, syncs, truncates     int
	failWrite, failSync, failCut map[int]bool
}

func (f *faultyFile) Write(p []byte) (int, error) {
	f.mu.Lock()
	f.writes++
	fail := f.failWrite[f.writes]
	f.mu.Unlock()
	if !fail {
		return f.file.Write(p)
	}
	n, err := f.file.Write(p[:len(p)/2])
	if err != nil {
		return n, err
	}
	return n, syscall.ENOSPC
}

func (f *faultyFile) Sync() error {
	f.mu.Lock()
	f.syncs++
	fail := f.failSync[f.syncs]
	f.mu.Unlock()
	if fail {
		return syscall.EIO
	}
	return f.file.Sync()
}

func (f *faultyFile) Truncate(size int64) error {
	f.mu.Lock()
	f.truncates++
	fail := f.failCut[f.truncates]
	f.mu.Unlock()
	if fail {
		return syscall.EIO
	}
	return f.file.Truncate(size)
}

// TestAppendFaults makes appends fail and checks that the log then holds
// exactly the entries whose append succeeded.
func TestAppendFaults(t *testing.T) {
	tests := []struct {
		name string
		file *faultyFile
	}{
		{"short write", &faultyFile{failWrite: map[int]bool{2: true}}},
		{"failed fsync", &faultyFile{failSync: map[int]bool{2: true}}},
		{"short write, truncation fails once", &faultyFile{failWrite: map[int]bool{2: true}, failCut: map[int]bool{1: true}}},
		{"short write, truncation fails twice", &faultyFile{failWrite: map[int]bool{2: true}, failCut: map[int]bool{1: true, 2: true}}},
		{"two short writes in a row", &faultyFile{failWrite: map[int]bool{2: true, 3: true}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "log.jsonl")
			open := func(path string, perm fs.FileMode) (file, error) {
				f, err := openAppend(path, perm)
				if err != nil {
					return nil, err
				}
				tt.file.file = f
				return tt.file, nil
			}
			l, err := openLog(path, 0o600, nil, func(int, []byte) error { return nil }, open)
			if err != nil {
				t.Fatal(err)
			}
			var kept []entry
			failed := 0
			for i := 1; i <= 5; i++ {
				e := entry{N: i}
				if err := l.Append(e); err != nil {
					failed++
					continue
				}
				kept = append(kept, e)
			}
			if failed == 0 {
				t.Fatal("no append failed; the fault was not injected")
			}
			closeAndCheck(t, l, path, kept)
		})
	}
}

func TestRewrite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log.jsonl")
	l, _, _, err := openEntries(t, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Append(entry{N: 1}, entry{N: 2}, entry{N: 3}); err != nil {
		t.Fatal(err)
	}
	if err := l.Rewrite(entry{N: 3}); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(entry{N: 4}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Size(); got != int64(len(data)) {
		t.Errorf("Size() = %d, want the file's %d bytes", got, len(data))
	}
	if err := l.Close(); err != nil {
		t.Fatal(err)
	}
	if err := l.Append(entry{N: 5}); err == nil {
		t.Error("an append after Close succeeded")
	}
	l2, got, _, err := openEntries(t, path)
	if err != nil {
		t.Fatal(err)
	}
	defer l2.Close()
	if diff := cmp.Diff([]entry{{N: 3}, {N: 4}}, got); diff != "" {
		t.Errorf("entries after a rewrite (-want +got):\n%s", diff)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("mode after a rewrite %v, want 0600", info.Mode().Perm())
	}
}

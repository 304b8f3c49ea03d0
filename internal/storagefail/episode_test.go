package storagefail

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/logtest"
)

var msgs = Messages{Began: "cannot be written", Again: "still cannot be written", Ended: "written again"}

// An episode logs its first failure at Error, the others at Debug, and its
// end once, at Info, with how long it lasted and how many failures it
// counted; a success outside an episode logs nothing.
func TestEpisode(t *testing.T) {
	tests := []struct {
		name  string
		quiet time.Duration
		steps string // f: a failure, s: a success, one a second
		want  []string
	}{
		{"no failure", 0, "sss", nil},
		{"one failure", 0, "fs", []string{"ERROR cannot be written", "INFO written again lasted=1s failures=1"}},
		{"a flood", 0, "ffffs", []string{"ERROR cannot be written", "DEBUG still cannot be written", "DEBUG still cannot be written", "DEBUG still cannot be written", "INFO written again lasted=4s failures=4"}},
		{"two episodes", 0, "ffsfss", []string{"ERROR cannot be written", "DEBUG still cannot be written", "INFO written again lasted=2s failures=2", "ERROR cannot be written", "INFO written again lasted=1s failures=1"}},
		{"going on", 0, "sff", []string{"ERROR cannot be written", "DEBUG still cannot be written"}},
		{"flapping within the quiet time", 3 * time.Second, "fsfsfsssss", []string{"ERROR cannot be written", "DEBUG still cannot be written", "DEBUG still cannot be written", "INFO written again lasted=7s failures=3"}},
		{"a success after the quiet time", 2 * time.Second, "fss", []string{"ERROR cannot be written", "INFO written again lasted=2s failures=1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := logtest.New()
			e := NewEpisode(rec.Logger(), msgs, WithQuiet(tt.quiet))
			clock := time.Unix(1000, 0)
			e.now = func() time.Time { return clock }
			began, ended := 0, 0
			for _, step := range tt.steps {
				clock = clock.Add(time.Second)
				if step == 'f' {
					if e.Failed(syscall.ENOSPC) {
						began++
					}
					continue
				}
				if e.Succeeded() {
					ended++
				}
			}
			var got []string
			for _, r := range rec.Records() {
				line := r.Level.String() + " " + r.Message
				if r.Message == msgs.Ended {
					line += fmt.Sprintf(" lasted=%s failures=%s", r.Attrs["lasted"], r.Attrs["failures"])
				}
				got = append(got, line)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("the log (-want +got):\n%s", diff)
			}
			if wantBegan := countLevel(tt.want, "ERROR"); began != wantBegan {
				t.Errorf("Failed reported %d beginnings, want %d", began, wantBegan)
			}
			if wantEnded := countLevel(tt.want, "INFO"); ended != wantEnded {
				t.Errorf("Succeeded reported %d ends, want %d", ended, wantEnded)
			}
			if wantActive := len(tt.steps) > 0 && tt.steps[len(tt.steps)-1] == 'f'; e.Active() != wantActive {
				t.Errorf("Active = %v, want %v", e.Active(), wantActive)
			}
		})
	}
}

func countLevel(lines []string, level string) int {
	n := 0
	for _, l := range lines {
		if len(l) > len(level) && l[:len(level)] == level {
			n++
		}
	}
	return n
}

// The lines of an episode carry the caller's attributes and the error.
func TestEpisodeAttrs(t *testing.T) {
	rec := logtest.New()
	e := NewEpisode(rec.Logger(), msgs)
	e.Failed(syscall.ENOSPC, "file", "a")
	e.Failed(syscall.EROFS, "file", "b")
	e.Succeeded("file", "c")
	var got []string
	for _, r := range rec.Records() {
		got = append(got, r.Attrs["file"]+" "+r.Attrs["err"])
	}
	want := []string{"a " + syscall.ENOSPC.Error(), "b " + syscall.EROFS.Error(), "c "}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the attributes (-want +got):\n%s", diff)
	}
}

// A nil logger logs nowhere, and the episode is still followed.
func TestEpisodeNilLogger(t *testing.T) {
	e := NewEpisode(nil, msgs)
	if !e.Failed(syscall.ENOSPC) || !e.Active() || !e.Succeeded() || e.Active() {
		t.Error("an episode without a logger did not begin and end")
	}
}

func TestIs(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("agent: transcript: %w", &fs.PathError{Op: "write", Path: "/x", Err: syscall.ENOSPC}), true},
		{&fs.PathError{Op: "write", Path: "/x", Err: syscall.EDQUOT}, true},
		{&fs.PathError{Op: "open", Path: "/x", Err: syscall.EROFS}, true},
		{&fs.PathError{Op: "fsync", Path: "/x", Err: syscall.EIO}, true},
		{&fs.PathError{Op: "open", Path: "/x", Err: syscall.EACCES}, false},
		{errors.New("no space left on device"), false},
		{nil, false},
	}
	for _, tt := range tests {
		if got := Is(tt.err); got != tt.want {
			t.Errorf("Is(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

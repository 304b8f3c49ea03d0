package scheduler

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestPersistenceRoundTrip checks that jobs, with their last run and
// outcome, survive a restart, and that the file is private.
func TestPersistenceRoundTrip(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
	first := newEnv(t, setup{opts: []Option{WithClock(clock.Now)}})
	first.schedule(t, "chat-a", "0 9 * * 1", "weekly review", "")
	w := first.schedule(t, "chat-a", "@every 5m", "what changed?", "echo changed")
	first.schedule(t, "chat-b", "2026-12-01 09:00", "dentist", "")
	if _, err := first.s.Schedule("chat-b", "@daily", "news", "exit 1", "the-news"); err != nil {
		t.Fatal(err)
	}
	first.runNow(t, w.ID)
	want := first.s.All()
	if got := first.job(t, w.ID); got.LastOutcome != "output sent to the chat" || !got.LastRun.Equal(clock.Now()) {
		t.Fatalf("run not recorded: %q at %v", got.LastOutcome, got.LastRun)
	}

	second := newEnv(t, setup{dir: first.dir, opts: []Option{WithClock(clock.Now)}})
	if diff := cmp.Diff(want, second.s.All()); diff != "" {
		t.Errorf("jobs after a restart (-want +got):\n%s", diff)
	}
	info, err := os.Stat(filepath.Join(first.dir, "jobs.json"))
	if err != nil {
		t.Fatal(err)
	}
	if perm := info.Mode().Perm(); perm != 0o600 {
		t.Errorf("jobs.json mode %v, want 0600", perm)
	}
	leftovers, _ := filepath.Glob(filepath.Join(first.dir, ".jobs.json.*"))
	if len(leftovers) > 0 {
		t.Errorf("temporary files left behind: %v", leftovers)
	}
}

// TestCorruptJobsFile checks that a jobs.json that does not parse stops
// start-up with its path and the reason, and is never rewritten.
func TestCorruptJobsFile(t *testing.T) {
	tests := []struct {
		name    string
		content string
		reason  string
	}{
		{"not JSON", `{"version": 1, "jobs": [`, "does not parse"},
		{"empty file", ``, "does not parse"},
		{"trailing data", `{"version": 1, "jobs": []} {}`, "does not parse"},
		{"wrong version", `{"version": 7, "jobs": []}`, "unsupported version 7"},
		{"bad schedule", `{"version": 1, "jobs": [{"id": "a1", "target": "chat-a", "schedule": "every day", "prompt": "p"}]}`, "invalid schedule"},
		{"no target", `{"version": 1, "jobs": [{"id": "a1", "schedule": "@daily", "prompt": "p"}]}`, "no target chat"},
		{"duplicate id", `{"version": 1, "jobs": [{"id": "a1", "target": "c", "schedule": "@daily", "prompt": "p"}, {"id": "a1", "target": "c", "schedule": "@daily", "prompt": "p"}]}`, "appears twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "jobs.json")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			s, err := New(path)
			if err == nil {
				t.Fatalf("New accepted a broken jobs.json (scheduler %v)", s)
			}
			if msg := err.Error(); !strings.Contains(msg, path) || !strings.Contains(msg, tt.reason) {
				t.Errorf("error %q does not name the path and %q", msg, tt.reason)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, []byte(tt.content)) {
				t.Errorf("jobs.json was rewritten: %q", got)
			}
		})
	}
}

// TestMissingJobsFile checks that a missing file holds no jobs and is not
// created until a job is scheduled.
func TestMissingJobsFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "jobs.json")
	s, err := New(path)
	if err != nil {
		t.Fatal(err)
	}
	if jobs := s.All(); len(jobs) != 0 {
		t.Errorf("All() = %v, want none", jobs)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("jobs.json exists before any job: %v", err)
	}
	if _, err := s.Schedule("chat-a", "@daily", "p", "", ""); err != nil {
		t.Fatal(err)
	}
	jobs, err := loadJobs(path)
	if err != nil || len(jobs) != 1 {
		t.Errorf("after one job, the file holds %d job(s), err %v", len(jobs), err)
	}
}

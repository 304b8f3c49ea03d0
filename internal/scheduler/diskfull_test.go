package scheduler

import (
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/logtest"
	"github.com/volcanic/telegram-agent/internal/tmpfstest"
)

// The tests here keep the jobs file on a real tmpfs that fills up
// (tmpfstest).

// TestOneShotOnFullDisk lets a one-shot job come due on a full disk, pass
// after pass: the scheduler logs one Error for the episode, not one per
// pass; the chat is told once, in words, without the file's path; once
// space is freed the job runs and the end of the episode is one Info.
func TestOneShotOnFullDisk(t *testing.T) {
	d := tmpfstest.Mount(t, 1<<20)
	rec := logtest.New()
	clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
	e := newEnv(t, setup{dir: d.Dir, opts: []Option{WithClock(clock.Now), WithLogger(rec.Logger())}})
	j := e.schedule(t, "chat-a", "2026-06-01 13:00", "call mum", "") // 11:00 UTC
	d.Fill()
	if err := e.s.Start(t.Context(), e.chats); err != nil {
		t.Fatal(err)
	}
	const passes = 4
	for i := range passes {
		if ps := e.passAt(t, clock, j.At.Add(time.Duration(i)*time.Minute)); ps.fired != 0 {
			t.Fatalf("pass %d: a one-shot job that could not be saved as fired ran", i)
		}
	}
	w := rec.Find(func(r logtest.Record) bool { return r.Level >= slog.LevelWarn })
	if len(w) != 1 || w[0].Level != slog.LevelError || !strings.Contains(w[0].Message, "the jobs file cannot be written") {
		t.Errorf("%d passes on a full disk logged %d warnings and errors, want the episode's one Error:\n%s", passes, len(w), rec.Text())
	}
	d.Drain()
	if ps := e.passAt(t, clock, j.At.Add(passes*time.Minute)); ps.fired != 1 {
		t.Fatalf("once the disk was freed the pass fired %d job(s), want 1", ps.fired)
	}
	e.stop(t)
	ended := rec.Find(logtest.Is(slog.LevelInfo, "scheduler: the jobs file is written again"))
	if len(ended) != 1 || atoi(ended[0].Attrs["failures"]) < passes {
		t.Errorf("the end of the episode was logged %d times, want once with at least 4 failures (one per pass):\n%s", len(ended), rec.Text())
	}
	msgs := e.chats.sent()
	if len(msgs) == 0 || msgs[0].Kind != "notify" {
		t.Fatalf("the chat was sent %+v, want the alert first", msgs)
	}
	alert := msgs[0].Text
	if !strings.Contains(alert, "disk is full") || strings.Contains(alert, d.Dir) || strings.Contains(alert, "jobs.json") {
		t.Errorf("the chat was told %q, want the full disk in words, without the file's path", alert)
	}
}

// atoi returns the number s says, or -1.
func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		return -1
	}
	return n
}

// TestScheduleOnFullDisk adds a job on a full disk: nothing is added, and
// the model reads why in words, without the file's path.
func TestScheduleOnFullDisk(t *testing.T) {
	d := tmpfstest.Mount(t, 1<<20)
	e := newEnv(t, setup{dir: d.Dir})
	d.Fill()
	_, err := e.s.Schedule("chat-a", "@every 1h", "call mum", "", "")
	if err == nil {
		t.Fatal("Schedule succeeded on a full disk")
	}
	if got := toolError(err, time.Minute); !strings.Contains(got, "disk is full") || strings.Contains(got, d.Dir) || strings.Contains(got, "jobs.json") {
		t.Errorf("the model is told %q, want the full disk in words, without the file's path", got)
	}
	if jobs := e.s.List("chat-a"); len(jobs) != 0 {
		t.Errorf("the job is listed though it could not be saved: %+v", jobs)
	}
}

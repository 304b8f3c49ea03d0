package scheduler

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestEveryFires checks that @every 1s fires repeatedly on the real clock.
func TestEveryFires(t *testing.T) {
	e := newEnv(t, setup{opts: []Option{WithMinInterval(time.Second)}})
	j := e.schedule(t, "chat-a", "@every 1s", "tick", "")
	if err := e.s.Start(t.Context(), e.chats); err != nil {
		t.Fatal(err)
	}
	msgs := e.chats.waitFor(t, 2)
	want := sent{Kind: "prompt", Target: "chat-a", Label: "⏰ Job tick", Text: "tick"}
	for _, m := range msgs[:2] {
		if diff := cmp.Diff(want, m); diff != "" {
			t.Errorf("prompt (-want +got):\n%s", diff)
		}
	}
	if got := e.job(t, j.ID); got.LastOutcome != "prompted the chat" || got.LastRun.IsZero() {
		t.Errorf("last run %v, outcome %q", got.LastRun, got.LastOutcome)
	}
}

// TestOneShotAcrossDST fires one-shot jobs in Europe/Berlin on an injected
// clock: not a second early, at the instant the documented rule gives for
// a time in the spring gap and one in the autumn fold; then the job is
// gone.
func TestOneShotAcrossDST(t *testing.T) {
	tests := []struct {
		name  string
		local string
		want  time.Time
	}{
		{"spring gap", "2026-03-29 02:30", time.Date(2026, 3, 29, 1, 30, 0, 0, time.UTC)},
		{"autumn fold", "2026-10-25 02:30", time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC)},
		{"ordinary", "2026-12-01 09:00", time.Date(2026, 12, 1, 8, 0, 0, 0, time.UTC)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{now: tt.want.Add(-48 * time.Hour)}
			e := newEnv(t, setup{opts: []Option{WithClock(clock.Now)}})
			j := e.schedule(t, "chat-a", tt.local, "wake up", "")
			if next := e.s.Next(j); !next.Equal(tt.want) {
				t.Fatalf("Next = %v, want %v", next.UTC(), tt.want)
			}
			if err := e.s.Start(t.Context(), e.chats); err != nil {
				t.Fatal(err)
			}
			if ps := e.passAt(t, clock, tt.want.Add(-time.Second)); ps.fired != 0 {
				t.Fatalf("fired %d job(s) a second early", ps.fired)
			}
			if ps := e.passAt(t, clock, tt.want); ps.fired != 1 {
				t.Fatalf("fired %d job(s) on time, want 1", ps.fired)
			}
			if jobs := e.s.List("chat-a"); len(jobs) != 0 {
				t.Errorf("the one-shot job is still listed: %v", jobs)
			}
			if ps := e.passAt(t, clock, tt.want.Add(time.Hour)); ps.fired != 0 {
				t.Errorf("an hour later the loop fired %d job(s) again", ps.fired)
			}
			e.stop(t)
			want := []sent{{Kind: "prompt", Target: "chat-a", Label: "⏰ Job wake-up", Text: "wake up"}}
			if diff := cmp.Diff(want, e.chats.sent()); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		})
	}
}

// TestMissedOneShot checks that a one-shot job whose time passed while the
// bot was down runs once at start-up, marked late, and never again;
// recurring jobs do not back-fill.
func TestMissedOneShot(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
	before := newEnv(t, setup{opts: []Option{WithClock(clock.Now)}})
	before.schedule(t, "chat-a", "2026-06-01 13:00", "call mum", "") // 11:00 UTC
	before.schedule(t, "chat-a", "@hourly", "hourly check", "")

	clock.Set(time.Date(2026, 6, 1, 15, 30, 0, 0, time.UTC)) // the bot was down for hours
	after := newEnv(t, setup{dir: before.dir, opts: []Option{WithClock(clock.Now)}})
	after.startMissed(t, clock, "start-up")

	again := newEnv(t, setup{dir: before.dir, opts: []Option{WithClock(clock.Now)}})
	if err := again.s.Start(t.Context(), again.chats); err != nil {
		t.Fatal(err)
	}
	if ps := again.waitPass(t, clock.Now()); ps.fired != 0 {
		t.Errorf("after a second restart the loop fired %d job(s)", ps.fired)
	}
	again.stop(t)
	if got := again.chats.sent(); len(got) != 0 {
		t.Errorf("after a second restart the chat got %+v", got)
	}
	if jobs := again.s.List("chat-a"); len(jobs) != 1 || jobs[0].Name != "hourly-check" {
		t.Errorf("jobs left: %+v", jobs)
	}
}

// TestStartedLate checks that a scheduler given its chats only when it
// starts, after its jobs were loaded and the agent activated it (main
// builds the chat host in between), fires nothing before and then
// delivers what is due, in the chat's zone the chats give.
func TestStartedLate(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
	before := newEnv(t, setup{opts: []Option{WithClock(clock.Now)}})
	before.schedule(t, "chat-a", "2026-06-01 13:00", "call mum", "") // 11:00 UTC

	clock.Set(time.Date(2026, 6, 1, 15, 30, 0, 0, time.UTC))
	after := newEnv(t, setup{dir: before.dir, late: true, opts: []Option{WithClock(clock.Now)}})
	if jobs := after.s.List("chat-a"); len(jobs) != 1 || jobs[0].Name != "call-mum" {
		t.Fatalf("before Start the scheduler lists %+v, want the missed job", jobs)
	}
	clock.Set(clock.Now().Add(time.Minute)) // the chat host is built meanwhile
	if got := after.chats.sent(); len(got) != 0 {
		t.Fatalf("before Start the chat got %+v", got)
	}
	after.startMissed(t, clock, "a late start")
}

// startMissed starts e, whose jobs file holds the one-shot job "call mum"
// of chat-a that was due at 13:00 CEST while the bot was down, and checks
// that the first pass runs it once, marked late, in the chat's zone; when
// names the start in the failures.
func (e *env) startMissed(t *testing.T, clock *fakeClock, when string) {
	t.Helper()
	if err := e.s.Start(t.Context(), e.chats); err != nil {
		t.Fatal(err)
	}
	if ps := e.waitPass(t, clock.Now()); ps.fired != 1 {
		t.Errorf("the first pass after %s fired %d job(s), want the missed one-shot", when, ps.fired)
	}
	e.stop(t)
	want := []sent{{
		Kind: "prompt", Target: "chat-a", Label: "⏰ Job call-mum (late)",
		Text: "(This job was due at Mon 2026-06-01 13:00 CEST; it runs late because the bot was not running then.)\n\ncall mum",
	}}
	if diff := cmp.Diff(want, e.chats.sent()); diff != "" {
		t.Errorf("messages after %s (-want +got):\n%s", when, diff)
	}
}

// TestStartNeedsChats checks that Start refuses to fire through no chats.
func TestStartNeedsChats(t *testing.T) {
	e := newEnv(t, setup{late: true})
	if err := e.s.Start(t.Context(), nil); err == nil {
		e.stop(t)
		t.Error("Start succeeded without chats")
	}
}

// TestChatsAreIsolated checks that a chat lists and cancels only its own
// jobs, and that cancelling another chat's job looks like a missing one.
func TestChatsAreIsolated(t *testing.T) {
	e := newEnv(t, setup{})
	a := e.schedule(t, "chat-a", "@daily", "a's job", "")
	if jobs := e.s.List("chat-b"); len(jobs) != 0 {
		t.Errorf("chat-b lists %d job(s) of chat-a", len(jobs))
	}
	if err := e.s.Cancel("chat-b", a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("chat-b cancelling chat-a's job: %v, want ErrNotFound", err)
	}
	if jobs := e.s.List("chat-a"); len(jobs) != 1 {
		t.Fatalf("chat-a has %d job(s) after chat-b's attempt", len(jobs))
	}
	if err := e.s.Cancel("chat-a", a.ID); err != nil {
		t.Fatal(err)
	}
	if jobs := e.s.List("chat-a"); len(jobs) != 0 {
		t.Errorf("chat-a still lists %d job(s)", len(jobs))
	}
	stored, err := loadJobs(filepath.Join(e.dir, "jobs.json"))
	if err != nil || len(stored) != 0 {
		t.Errorf("the file holds %d job(s) after the cancel (err %v)", len(stored), err)
	}
}

// TestListOrderAndLimit checks List's order (next run first) and the
// per-chat limit.
func TestListOrderAndLimit(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 20, 0, 0, time.UTC)}
	e := newEnv(t, setup{opts: []Option{WithClock(clock.Now), WithMaxJobs(3)}})
	daily := e.schedule(t, "chat-a", "@daily", "daily", "")
	hourly := e.schedule(t, "chat-a", "@hourly", "hourly", "")
	soon := e.schedule(t, "chat-a", "2026-06-01 12:30", "soon", "") // 10:30 UTC
	var got []string
	for _, j := range e.s.List("chat-a") {
		got = append(got, j.ID)
	}
	if diff := cmp.Diff([]string{soon.ID, hourly.ID, daily.ID}, got); diff != "" {
		t.Errorf("List order (-want +got):\n%s", diff)
	}
	if _, err := e.s.Schedule("chat-a", "@daily", "fourth", "", ""); err == nil || !strings.Contains(err.Error(), "already has 3 jobs") {
		t.Errorf("a fourth job: %v, want the limit's error", err)
	}
	if _, err := e.s.Schedule("chat-b", "@daily", "other chat", "", ""); err != nil {
		t.Errorf("the limit is per chat, yet chat-b was refused: %v", err)
	}
}

// TestStopKillsRunningScript checks that Stop cancels a watcher the loop
// started, kills its process group (the background child that holds a
// named pipe open), waits for it and sends no alert.
func TestStopKillsRunningScript(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 20, 0, 0, time.UTC)}
	e := newEnv(t, setup{opts: []Option{WithClock(clock.Now)}})
	e.s.cfg.killGrace = 200 * time.Millisecond
	opened, gone := e.fifo(t, "child.fifo")
	j := e.schedule(t, "chat-a", "@hourly", "p", "sleep 30 3>child.fifo & wait")
	if err := e.s.Start(t.Context(), e.chats); err != nil {
		t.Fatal(err)
	}
	if ps := e.passAt(t, clock, e.s.Next(j)); ps.fired != 1 {
		t.Fatalf("the pass at the job's time fired %d job(s)", ps.fired)
	}
	within(t, opened, "the watcher's child to start")
	e.stop(t)
	within(t, gone, "the watcher's child to die after Stop")
	if got := e.chats.sent(); len(got) != 0 {
		t.Errorf("Stop made the scheduler send %+v", got)
	}
}

// TestStartNeedsActivation checks that the scheduler refuses to fire
// before the agent gave it its spawn policy.
func TestStartNeedsActivation(t *testing.T) {
	s, err := New(filepath.Join(t.TempDir(), "jobs.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(t.Context(), newFakeChats(nil)); err == nil {
		t.Error("Start succeeded without activation")
	}
}

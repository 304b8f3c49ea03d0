package scheduler

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/agent"
)

// TestOneShotNotRunWhenSaveFails checks that a due one-shot job whose
// removal from the file fails does not run (it would run again after a
// restart), that its chat is told once however often the save fails, and
// that it runs once the file can be written, and never again.
func TestOneShotNotRunWhenSaveFails(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
	e := newEnv(t, setup{opts: []Option{WithClock(clock.Now)}})
	j := e.schedule(t, "chat-a", "2026-06-01 13:00", "call mum", "") // 11:00 UTC
	var failing atomic.Bool
	failing.Store(true)
	e.s.cfg.saveFile = func(path string, jobs []Job) error {
		if failing.Load() {
			return errors.New("disk full")
		}
		return saveJobs(path, jobs)
	}
	if err := e.s.Start(t.Context(), e.chats); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(e.dir, "jobs.json")
	for i, at := range []time.Time{j.At, j.At.Add(time.Minute)} {
		if ps := e.passAt(t, clock, at); ps.fired != 0 {
			t.Fatalf("pass %d: a one-shot job that could not be saved as fired ran", i)
		}
		if jobs := e.s.List("chat-a"); len(jobs) != 1 || jobs[0].ID != j.ID {
			t.Errorf("pass %d: the unfired job is no longer listed: %+v", i, jobs)
		}
		if stored, err := loadJobs(path); err != nil || len(stored) != 1 {
			t.Errorf("pass %d: the file holds %d job(s) (err %v), want the unfired one", i, len(stored), err)
		}
	}

	failing.Store(false)
	if ps := e.passAt(t, clock, j.At.Add(2*time.Minute)); ps.fired != 1 {
		t.Fatalf("once the file could be written the pass fired %d job(s), want 1", ps.fired)
	}
	if ps := e.passAt(t, clock, j.At.Add(3*time.Minute)); ps.fired != 0 {
		t.Errorf("the one-shot job fired again")
	}
	e.stop(t)
	msgs := e.chats.sent()
	var kinds []string
	for _, m := range msgs {
		kinds = append(kinds, m.Kind)
	}
	if diff := cmp.Diff([]string{"notify", "prompt"}, kinds); diff != "" {
		t.Fatalf("message kinds (-want +got):\n%s", diff)
	}
	for _, want := range []string{"Job call-mum (" + j.ID + ") is due but did not run", "disk full", "must never run twice"} {
		if !strings.Contains(msgs[0].Text, want) {
			t.Errorf("alert %q lacks %q", msgs[0].Text, want)
		}
	}
	if !strings.HasSuffix(msgs[1].Text, "call mum") {
		t.Errorf("prompt %q is not the job's", msgs[1].Text)
	}
	if stored, err := loadJobs(path); err != nil || len(stored) != 0 {
		t.Errorf("the file holds %d job(s) after the run (err %v)", len(stored), err)
	}

	again := newEnv(t, setup{dir: e.dir, opts: []Option{WithClock(clock.Now)}})
	if err := again.s.Start(t.Context(), again.chats); err != nil {
		t.Fatal(err)
	}
	if ps := again.waitPass(t, clock.Now()); ps.fired != 0 {
		t.Errorf("after a restart the one-shot job fired again")
	}
}

// TestCancelFiredOneShot checks the answer to cancelling a one-shot job
// that fired: "already running" while its run goes on, "already ran"
// after, through Cancel (the /jobs button) and cancel_job; another chat
// still gets "not found".
func TestCancelFiredOneShot(t *testing.T) {
	tests := []struct {
		name string
		// cancel cancels id for target and returns the answer.
		cancel                    func(t *testing.T, e *env, target, id string) string
		wantRunning, wantFinished string // {id} stands for the job's id
		wantOther                 string
	}{
		{
			name: "Cancel",
			cancel: func(t *testing.T, e *env, target, id string) string {
				err := e.s.Cancel(target, id)
				for _, sentinel := range []error{ErrAlreadyRunning, ErrAlreadyFinished, ErrNotFound} {
					if errors.Is(err, sentinel) {
						return sentinel.Error()
					}
				}
				return "unexpected: " + errString(err)
			},
			wantRunning:  ErrAlreadyRunning.Error(),
			wantFinished: ErrAlreadyFinished.Error(),
			wantOther:    ErrNotFound.Error(),
		},
		{
			name: "cancel_job",
			cancel: func(t *testing.T, e *env, target, id string) string {
				res := e.callTool(t, "cancel_job", target, `{"id": "`+id+`"}`)
				if !res.IsError {
					t.Errorf("cancel_job of a fired job is not an error result")
				}
				return agent.TextOf(res.Content)
			},
			wantRunning:  "Job {id} already fired and is running now; a one-shot job cannot be cancelled once it fired.",
			wantFinished: "Job {id} already ran; a one-shot job is gone once it fired.",
			wantOther:    `This chat has no job "{id}"; list_jobs shows its jobs.`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
			e := newEnv(t, setup{opts: []Option{WithClock(clock.Now)}})
			release := make(chan struct{})
			e.chats.onPrompt = func(ctx context.Context, _, _, _ string) error {
				select {
				case <-release:
				case <-ctx.Done():
				}
				return nil
			}
			j := e.schedule(t, "chat-a", "2026-06-01 13:00", "call mum", "")
			if err := e.s.Start(t.Context(), e.chats); err != nil {
				t.Fatal(err)
			}
			if ps := e.passAt(t, clock, j.At); ps.fired != 1 {
				t.Fatalf("the pass at the job's time fired %d job(s)", ps.fired)
			}
			e.chats.waitFor(t, 1) // the run is prompting the chat
			want := func(s string) string { return strings.ReplaceAll(s, "{id}", j.ID) }
			if diff := cmp.Diff(want(tt.wantRunning), tt.cancel(t, e, "chat-a", j.ID)); diff != "" {
				t.Errorf("while it runs (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(want(tt.wantOther), tt.cancel(t, e, "chat-b", j.ID)); diff != "" {
				t.Errorf("another chat (-want +got):\n%s", diff)
			}
			close(release)
			e.stop(t)
			if diff := cmp.Diff(want(tt.wantFinished), tt.cancel(t, e, "chat-a", j.ID)); diff != "" {
				t.Errorf("after it ran (-want +got):\n%s", diff)
			}
		})
	}
}

// errString returns err's text, "<nil>" for nil.
func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

// errFiredOnce stands for "ErrAlreadyRunning or ErrAlreadyFinished".
var errFiredOnce = errors.New("already running or finished")

// TestCancelWhileAOneShotIsBeingFired cancels a one-shot job while the save
// that marks it as firing in the file is in flight: Cancel waits for that save,
// then answers from what came of it. When the save succeeds the job runs
// and Cancel says so; when it fails the job stays scheduled, so Cancel
// cancels it, and it never runs.
func TestCancelWhileAOneShotIsBeingFired(t *testing.T) {
	for _, tt := range []struct {
		name     string
		saveErr  error
		wantErr  error
		wantRuns int
	}{
		// The run may already be over when Cancel answers.
		{name: "the save succeeds", wantErr: errFiredOnce, wantRuns: 1},
		{name: "the save fails", saveErr: errors.New("disk full"), wantErr: nil, wantRuns: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
			e := newEnv(t, setup{opts: []Option{WithClock(clock.Now)}})
			j := e.schedule(t, "chat-a", "2026-06-01 13:00", "call mum", "")
			entered := make(chan struct{})
			release := make(chan struct{})
			var blocking atomic.Bool
			blocking.Store(true)
			e.s.cfg.saveFile = func(path string, jobs []Job) error {
				if blocking.CompareAndSwap(true, false) {
					close(entered)
					<-release
					if tt.saveErr != nil {
						return tt.saveErr
					}
				}
				return saveJobs(path, jobs)
			}
			if err := e.s.Start(t.Context(), e.chats); err != nil {
				t.Fatal(err)
			}
			// A pass before the job is due consumes every pending poke, so
			// the only pass at its time is the one this test starts.
			e.passAt(t, clock, j.At.Add(-time.Minute))
			clock.Set(j.At)
			e.s.poke()
			select {
			case <-entered:
			case <-time.After(hangGuard):
				t.Fatal("the firing pass did not start saving")
			}
			done := make(chan error, 1)
			go func() { done <- e.s.Cancel("chat-a", j.ID) }()
			close(release)
			var err error
			select {
			case err = <-done:
			case <-time.After(hangGuard):
				t.Fatal("Cancel did not return")
			}
			fired := errors.Is(err, ErrAlreadyRunning) || errors.Is(err, ErrAlreadyFinished)
			if (tt.wantErr == errFiredOnce && !fired) || (tt.wantErr == nil && err != nil) {
				t.Fatalf("Cancel = %v, want %v", err, tt.wantErr)
			}
			e.stop(t)
			runs := 0
			for _, m := range e.chats.sent() {
				if m.Kind == "prompt" {
					runs++
				}
			}
			if runs != tt.wantRuns {
				t.Errorf("the job ran %d time(s), want %d", runs, tt.wantRuns)
			}
		})
	}
}

// TestOneShotWhosePromptTheChatRefusedIsTold checks that a one-shot job
// whose prompt the chat does not take (its journal cannot be written, its
// queue is full) is not lost without a word: it left the file as it fired
// and never runs again, so its chat is told, with what it said; a
// recurring job, whose next run comes, is not told each time.
func TestOneShotWhosePromptTheChatRefusedIsTold(t *testing.T) {
	for _, tc := range []struct {
		name, sched string
		err         error
		told        []string
	}{
		{name: "one-shot, full disk", sched: "2030-06-01 13:00", err: fmt.Errorf("chat: journal: %w", syscall.ENOSPC),
			told: []string{"was due but could not run", "the bot's disk is full or cannot be written", "does not run again", "It said: call mum"}},
		{name: "one-shot, full queue", sched: "2030-06-01 13:00", err: errors.New("chat: the chat's queue is full"),
			told: []string{"was due but could not run", "the chat's queue is full", "It said: call mum"}},
		{name: "recurring", sched: "0 * * * *", err: fmt.Errorf("chat: journal: %w", syscall.ENOSPC)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, setup{})
			e.chats.onPrompt = func(context.Context, string, string, string) error { return tc.err }
			j := e.schedule(t, "chat-a", tc.sched, "call mum", "")
			e.runNow(t, j.ID)
			var notices []string
			for _, m := range e.chats.sent() {
				if m.Kind == "notify" {
					notices = append(notices, m.Text)
				}
			}
			if tc.told == nil {
				if len(notices) != 0 {
					t.Errorf("a recurring job's refused prompt told the chat: %q", notices)
				}
				return
			}
			if len(notices) != 1 {
				t.Fatalf("%d notices, want 1: %q", len(notices), notices)
			}
			for _, want := range append(tc.told, "Job call-mum ("+j.ID+")") {
				if !strings.Contains(notices[0], want) {
					t.Errorf("notice %q lacks %q", notices[0], want)
				}
			}
		})
	}
}

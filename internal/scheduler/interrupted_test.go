package scheduler

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// saves makes every save of e's scheduler also send the jobs written on
// the returned channel, so that a test waits for a save instead of
// sleeping.
func (e *env) saves(t *testing.T) <-chan []Job {
	t.Helper()
	ch := make(chan []Job, 16)
	e.s.cfg.saveFile = func(path string, jobs []Job) error {
		err := saveJobs(path, jobs)
		if err == nil {
			select {
			case ch <- append([]Job(nil), jobs...):
			default:
			}
		}
		return err
	}
	return ch
}

// waitSave waits for a save that ok accepts.
func waitSave(t *testing.T, ch <-chan []Job, what string, ok func([]Job) bool) {
	t.Helper()
	deadline := time.After(hangGuard)
	for {
		select {
		case jobs := <-ch:
			if ok(jobs) {
				return
			}
		case <-deadline:
			t.Fatalf("waited %s for a save %s", hangGuard, what)
		}
	}
}

// count returns how many of msgs are of kind.
func count(msgs []sent, kind string) int {
	n := 0
	for _, m := range msgs {
		if m.Kind == kind {
			n++
		}
	}
	return n
}

// TestOneShotCutShortByARestart fires a one-shot job and lets the bot die
// at a point of its run: the first scheduler is dropped without Stop (a
// crash) or stopped (a graceful shutdown), and a second one starts on the
// same jobs.json. A job whose prompt the chat had not taken is reported to
// its chat once, and never runs again, not after a second restart either;
// a job whose prompt the chat took, or whose run ended with nothing to
// say, is not reported by the scheduler (the chat's journal owns a taken
// prompt).
func TestOneShotCutShortByARestart(t *testing.T) {
	for _, tc := range []struct {
		name   string
		script string
		// refuse makes the chat hold the prompt until the run is
		// cancelled, then refuse it: the crash comes before it is taken.
		refuse bool
		// graceful stops the first scheduler instead of dropping it.
		graceful   bool
		wantReport bool
	}{
		{name: "prompt job, crash after the firing save", refuse: true, wantReport: true},
		{name: "watcher, crash while its script runs", script: "sleep 30 3>held; echo found", wantReport: true},
		{name: "watcher, shutdown while its script runs", script: "sleep 30 3>held; echo found", graceful: true, wantReport: true},
		{name: "prompt job, crash after the chat took the prompt"},
		{name: "watcher, crash after it took the output", script: "echo found"},
		{name: "watcher, crash after a silent run", script: "echo '[SILENT]'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
			e := newEnv(t, setup{opts: []Option{WithClock(clock.Now)}})
			if tc.refuse {
				e.chats.onPrompt = func(ctx context.Context, _, _, _ string) error {
					<-ctx.Done()
					return ctx.Err()
				}
			}
			var opened <-chan struct{}
			if strings.Contains(tc.script, "held") {
				opened, _ = e.fifo(t, "held")
			}
			j := e.schedule(t, "chat-a", "2026-06-01 13:00", "call mum", tc.script) // 11:00 UTC
			saved := e.saves(t)
			if err := e.s.Start(t.Context(), e.chats); err != nil {
				t.Fatal(err)
			}
			if ps := e.passAt(t, clock, j.At); ps.fired != 1 {
				t.Fatalf("the pass at the job's time fired %d job(s), want 1", ps.fired)
			}
			path := filepath.Join(e.dir, "jobs.json")
			switch {
			case opened != nil:
				within(t, opened, "the watcher's script to start")
			case tc.refuse:
				e.chats.waitFor(t, 1) // Prompt was called and has not returned
			default:
				waitSave(t, saved, "without the job, once its run ended", func(jobs []Job) bool { return len(jobs) == 0 })
			}
			if tc.wantReport {
				stored, err := loadJobs(path)
				if err != nil || len(stored) != 1 || stored[0].Fired.IsZero() {
					t.Fatalf("at the crash point the file holds %+v (err %v), want the job marked as firing", stored, err)
				}
			}
			if tc.graceful {
				e.stop(t)
				if msgs := e.chats.sent(); len(msgs) != 0 {
					t.Errorf("the shutdown sent the chat %d message(s), want none: the restart reports the job", len(msgs))
				}
			}

			// The restart, while the first scheduler is dropped as it is.
			later := j.At.Add(10 * time.Minute)
			clock.Set(later)
			again := newEnv(t, setup{dir: e.dir, opts: []Option{WithClock(clock.Now)}})
			if err := again.s.Start(t.Context(), again.chats); err != nil {
				t.Fatal(err)
			}
			if ps := again.waitPass(t, later); ps.fired != 0 {
				t.Errorf("after the restart the one-shot job fired again")
			}
			if tc.wantReport {
				again.chats.waitFor(t, 1)
			}
			again.stop(t) // the report, and the save after it, are done
			msgs := again.chats.sent()
			if n := count(msgs, "prompt"); n != 0 {
				t.Errorf("after the restart the job ran %d time(s), want never", n)
			}
			want := 0
			if tc.wantReport {
				want = 1
			}
			if n := count(msgs, "notify"); n != want {
				t.Fatalf("after the restart the chat got %d notice(s), want %d: %+v", n, want, msgs)
			}
			if tc.wantReport {
				m := msgs[0]
				for _, s := range []string{"one-shot job “call-mum” (" + j.ID + ")", "was due at Mon 2026-06-01 13:00 CEST",
					"a restart of the bot came as it fired", "may not have run", "does not run again", "schedule it again"} {
					if !strings.Contains(m.Text, s) {
						t.Errorf("the report %q lacks %q", m.Text, s)
					}
				}
				if m.Target != "chat-a" {
					t.Errorf("the report went to %q, want chat-a", m.Target)
				}
			}
			if stored, err := loadJobs(path); err != nil || len(stored) != 0 {
				t.Errorf("after the restart the file holds %d job(s) (err %v), want none", len(stored), err)
			}

			third := newEnv(t, setup{dir: e.dir, opts: []Option{WithClock(clock.Now)}})
			if err := third.s.Start(t.Context(), third.chats); err != nil {
				t.Fatal(err)
			}
			third.passAt(t, clock, later.Add(time.Minute))
			third.stop(t)
			if msgs := third.chats.sent(); len(msgs) != 0 {
				t.Errorf("a second restart sent the chat %d message(s), want none", len(msgs))
			}
		})
	}
}

// TestForgedFiringJobs starts on a jobs.json the agent could have written:
// firing one-shot jobs for two chats (one named after a host secret, more
// than one start-up tells), a recurring job marked firing, and a job of a
// file written before the mark existed. The first jobs by due time get one
// redacted notice each; the rest leave the file untold; nothing runs; the
// recurring job and the old job stay scheduled as they were.
func TestForgedFiringJobs(t *testing.T) {
	dir := t.TempDir()
	clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
	file := func(e *env) string {
		return strings.ReplaceAll(`{"version": 1, "jobs": [
  {"id": "f0000001", "name": "one", "target": "chat-a", "schedule": "2026-06-01 09:00", "at": "2026-06-01T07:00:00Z", "prompt": "p", "created": "2026-05-01T00:00:00Z", "fired": "2026-06-01T07:00:00Z"},
  {"id": "f0000002", "name": "two SECRET", "target": "chat-a", "schedule": "2026-06-01 09:00", "at": "2026-06-01T07:00:00Z", "prompt": "p", "created": "2026-05-01T00:00:00Z", "fired": "2026-06-01T07:00:00Z"},
  {"id": "f0000003", "name": "three", "target": "chat-a", "schedule": "2026-06-01 09:05", "at": "2026-06-01T07:05:00Z", "prompt": "p", "created": "2026-05-01T00:00:00Z", "fired": "2026-06-01T07:05:00Z"},
  {"id": "f0000004", "name": "four", "target": "chat-b", "schedule": "2026-06-01 03:01", "at": "2026-06-01T07:01:00Z", "prompt": "p", "created": "2026-05-01T00:00:00Z", "fired": "2026-06-01T07:01:00Z"},
  {"id": "r0000001", "name": "hourly", "target": "chat-a", "schedule": "0 * * * *", "prompt": "p", "created": "2026-05-01T00:00:00Z", "fired": "2026-06-01T07:00:00Z"},
  {"id": "o0000001", "name": "old", "target": "chat-b", "schedule": "2026-06-02 09:00", "at": "2026-06-02T13:00:00Z", "prompt": "p", "created": "2026-05-01T00:00:00Z"}
]}`, "SECRET", e.secret)
	}
	e := newEnv(t, setup{dir: dir, file: file, opts: []Option{WithClock(clock.Now)}})
	e.s.cfg.maxReported = 3
	if err := e.s.Start(t.Context(), e.chats); err != nil {
		t.Fatal(err)
	}
	e.chats.waitFor(t, 3)
	e.passAt(t, clock, clock.Now().Add(time.Minute))
	e.stop(t)
	msgs := e.chats.sent()
	if n := count(msgs, "prompt"); n != 0 {
		t.Errorf("forged firing jobs made %d prompt(s), want none", n)
	}
	var got []string
	for _, m := range msgs {
		if strings.Contains(m.Text, e.secret) {
			t.Fatalf("a notice (%d bytes) holds the secret (%d bytes) a job's name held", len(m.Text), len(e.secret))
		}
		id := "?"
		if _, rest, ok := strings.Cut(m.Text, "” ("); ok {
			id, _, _ = strings.Cut(rest, ")")
		}
		got = append(got, m.Kind+" "+m.Target+" "+id)
	}
	// The three due first are told, one notice each, by chat; f0000003,
	// due last, is left untold.
	want := []string{"notify chat-a f0000001", "notify chat-a f0000002", "notify chat-b f0000004"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("what the chats were sent (-want +got):\n%s", diff)
	}
	if !strings.Contains(msgs[0].Text, "“one” (f0000001) was due at Mon 2026-06-01 09:00 CEST") {
		t.Errorf("chat-a's first notice %q lacks its job and its time", msgs[0].Text)
	}
	stored, err := loadJobs(filepath.Join(dir, "jobs.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, j := range stored {
		ids = append(ids, j.ID)
		if !j.Fired.IsZero() {
			t.Errorf("job %s is still marked firing in the file", j.ID)
		}
	}
	if strings.Join(ids, " ") != "o0000001 r0000001" {
		t.Errorf("the file holds jobs %q, want the recurring and the old one", ids)
	}
}

// twoCutShortJobs is a jobs.json with one one-shot job a restart cut
// short in each of chat-a and chat-b.
const twoCutShortJobs = `{"version": 1, "jobs": [
  {"id": "a0000001", "name": "call-mum", "target": "chat-a", "schedule": "2026-06-01 09:00", "at": "2026-06-01T07:00:00Z", "prompt": "p", "created": "2026-05-01T00:00:00Z", "fired": "2026-06-01T07:00:00Z"},
  {"id": "b0000001", "name": "water-plants", "target": "chat-b", "schedule": "2026-06-01 09:00", "at": "2026-06-01T07:00:00Z", "prompt": "p", "created": "2026-05-01T00:00:00Z", "fired": "2026-06-01T07:00:00Z"}
]}`

// TestInterruptedReportIsTriedAgain lets the chat refuse the start-up
// report of a one-shot job a restart cut short: the report is tried again
// while the scheduler runs, a chat that refuses it holds up no other, and
// a report still refused at shutdown is made after the next start-up; each
// chat is told once.
func TestInterruptedReportIsTriedAgain(t *testing.T) {
	file := func(*env) string { return twoCutShortJobs }
	refuseChatA := func(n int) func(string) error {
		var mu sync.Mutex
		return func(target string) error {
			mu.Lock()
			defer mu.Unlock()
			if target != "chat-a" || n == 0 {
				return nil
			}
			n--
			return errors.New("telegram: 502 Bad Gateway")
		}
	}
	clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
	path := func(e *env) string { return filepath.Join(e.dir, "jobs.json") }

	t.Run("told once Telegram takes it", func(t *testing.T) {
		e := newEnv(t, setup{file: file, opts: []Option{WithClock(clock.Now)}})
		e.s.cfg.reportPause = time.Millisecond
		e.chats.onNotify = refuseChatA(2)
		if err := e.s.Start(t.Context(), e.chats); err != nil {
			t.Fatal(err)
		}
		e.chats.waitFor(t, 4) // two refused, then one notice for each chat
		e.stop(t)
		var got []string
		for _, m := range e.chats.sent() {
			got = append(got, m.Kind+" "+m.Target)
		}
		want := []string{"refused chat-a", "notify chat-b", "refused chat-a", "notify chat-a"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("what the chats were sent (-want +got):\n%s", diff)
		}
		if stored, err := loadJobs(path(e)); err != nil || len(stored) != 0 {
			t.Errorf("the file holds %d job(s) (err %v), want none", len(stored), err)
		}
	})

	t.Run("refused until shutdown, told after the restart", func(t *testing.T) {
		e := newEnv(t, setup{file: file, opts: []Option{WithClock(clock.Now)}})
		e.s.cfg.reportPause = time.Hour // the shutdown ends the pause
		e.chats.onNotify = refuseChatA(-1)
		if err := e.s.Start(t.Context(), e.chats); err != nil {
			t.Fatal(err)
		}
		e.chats.waitFor(t, 2)
		e.stop(t)
		stored, err := loadJobs(path(e))
		if err != nil || len(stored) != 1 || stored[0].ID != "a0000001" || stored[0].Fired.IsZero() {
			t.Fatalf("after the shutdown the file holds %+v (err %v), want chat-a's job, still firing", stored, err)
		}
		again := newEnv(t, setup{dir: e.dir, opts: []Option{WithClock(clock.Now)}})
		if err := again.s.Start(t.Context(), again.chats); err != nil {
			t.Fatal(err)
		}
		again.chats.waitFor(t, 1)
		again.stop(t)
		msgs := again.chats.sent()
		if len(msgs) != 1 || msgs[0].Kind != "notify" || msgs[0].Target != "chat-a" || !strings.Contains(msgs[0].Text, "“call-mum” (a0000001)") {
			t.Errorf("after the restart the chats were sent %+v, want chat-a's one report", msgs)
		}
		if stored, err := loadJobs(path(e)); err != nil || len(stored) != 0 {
			t.Errorf("the file holds %d job(s) (err %v), want none", len(stored), err)
		}
	})
}

// TestInterruptedNoticeRefusedForGood lets chat-a refuse its start-up
// notice for good (the user blocked the bot; a forged target that is no
// chat): it is tried once, never again, and its job leaves the file as
// chat-b's told one does, so no restart tries it again either.
func TestInterruptedNoticeRefusedForGood(t *testing.T) {
	file := func(*env) string { return twoCutShortJobs }
	e := newEnv(t, setup{file: file})
	e.s.cfg.reportPause = time.Millisecond
	e.chats.onNotify = func(target string) error {
		if target == "chat-a" {
			return errRefusedForGood
		}
		return nil
	}
	saved := e.saves(t)
	if err := e.s.Start(t.Context(), e.chats); err != nil {
		t.Fatal(err)
	}
	waitSave(t, saved, "without either job", func(jobs []Job) bool { return len(jobs) == 0 })
	e.stop(t)
	var got []string
	for _, m := range e.chats.sent() {
		got = append(got, m.Kind+" "+m.Target)
	}
	if diff := cmp.Diff([]string{"refused chat-a", "notify chat-b"}, got); diff != "" {
		t.Errorf("what the chats were sent (-want +got):\n%s", diff)
	}
	if stored, err := loadJobs(filepath.Join(e.dir, "jobs.json")); err != nil || len(stored) != 0 {
		t.Errorf("the file holds %d job(s) (err %v), want none", len(stored), err)
	}
}

// TestCutShortJobsAreVisible starts on a jobs.json holding a one-shot job
// a restart cut short (named after a host secret, as a forged file may
// have it): until its chat is told, List, All and list_jobs show it as
// such, redacted, with no next run, and cancel_job removes it, after which
// the start-up tells nobody.
func TestCutShortJobsAreVisible(t *testing.T) {
	file := func(e *env) string {
		return `{"version": 1, "jobs": [
  {"id": "a0000001", "name": "call ` + e.secret + `", "target": "chat-a", "schedule": "2026-06-01 09:00", "at": "2026-06-01T07:00:00Z", "prompt": "p", "created": "2026-05-01T00:00:00Z", "fired": "2026-06-01T07:00:00Z"},
  {"id": "a0000002", "name": "hourly", "target": "chat-a", "schedule": "0 * * * *", "prompt": "p", "created": "2026-05-01T00:00:00Z"}
]}`
	}
	clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
	e := newEnv(t, setup{file: file, opts: []Option{WithClock(clock.Now)}})
	ids := func(jobs []Job) []string {
		var out []string
		for _, j := range jobs {
			out = append(out, fmt.Sprintf("%s cut=%v", j.ID, j.CutShort()))
		}
		return out
	}
	for _, tc := range []struct {
		name string
		got  []Job
		want []string
	}{
		{"List of its chat", e.s.List("chat-a"), []string{"a0000002 cut=false", "a0000001 cut=true"}},
		{"List of another chat", e.s.List("chat-b"), nil},
		{"All", e.s.All(), []string{"a0000002 cut=false", "a0000001 cut=true"}},
	} {
		if diff := cmp.Diff(tc.want, ids(tc.got)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tc.name, diff)
		}
	}
	if next := e.s.Next(e.job(t, "a0000001")); !next.IsZero() {
		t.Errorf("the cut-short job's next run is %v, want none", next)
	}
	listed := agent.TextOf(e.callTool(t, "list_jobs", "chat-a", `{}`).Content)
	if strings.Contains(listed, e.secret) {
		t.Fatalf("list_jobs (%d bytes) holds the secret (%d bytes) the job's name held", len(listed), len(e.secret))
	}
	for _, want := range []string{"2 scheduled job(s)", "a0000001 \"call [REDACTED", "was due at Mon 2026-06-01 09:00 CEST: a restart of the bot came as it fired", "does not run again"} {
		if !strings.Contains(listed, want) {
			t.Errorf("list_jobs %q lacks %q", listed, want)
		}
	}

	if err := e.s.Cancel("chat-b", "a0000001"); !errors.Is(err, ErrNotFound) {
		t.Errorf("another chat's Cancel of the cut-short job = %v, want ErrNotFound", err)
	}
	if res := e.callTool(t, "cancel_job", "chat-a", `{"id": "a0000001"}`); res.IsError || !strings.Contains(agent.TextOf(res.Content), "Cancelled job a0000001") {
		t.Fatalf("cancel_job of the cut-short job = %q (error %v), want it cancelled", agent.TextOf(res.Content), res.IsError)
	}
	stored, err := loadJobs(filepath.Join(e.dir, "jobs.json"))
	if err != nil || len(stored) != 1 || stored[0].ID != "a0000002" {
		t.Fatalf("after the cancel the file holds %d job(s) (err %v), want only the hourly one", len(stored), err)
	}
	if err := e.s.Start(t.Context(), e.chats); err != nil {
		t.Fatal(err)
	}
	e.passAt(t, clock, clock.Now().Add(time.Second))
	e.stop(t)
	if msgs := e.chats.sent(); len(msgs) != 0 {
		t.Errorf("after the cancel the start-up sent %d message(s), want none", len(msgs))
	}
}

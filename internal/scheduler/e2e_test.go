package scheduler

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// TestEndToEndWatcherRedacted runs the scheduler inside an agent: the
// model schedules a watcher through schedule_job that prints a secret read
// from a file; when it fires, the prompt that reaches Chats.Prompt, and
// through it the model, shows [REDACTED] and never the secret.
func TestEndToEndWatcherRedacted(t *testing.T) {
	clock := &fakeClock{now: time.Date(2026, 6, 1, 10, 0, 0, 0, time.UTC)}
	e := newEnv(t, setup{
		opts: []Option{WithClock(clock.Now)},
		faux: []agenttest.FauxResponse{
			agenttest.FauxToolCalls(agenttest.FauxCall("schedule_job",
				`{"schedule": "@hourly", "prompt": "Tell me what the file says.", "script": "cat notes.txt", "name": "notes-watch"}`)),
			agenttest.FauxText("Scheduled."),
			agenttest.FauxText("The file holds a redacted value."),
		},
	})
	e.writeFile(t, "notes.txt", "password: "+e.secret+"\n")
	sess, err := e.agent.Session(t.Context(), agent.SessionOptions{ID: "chat-a", Scope: "chat-a", TimeZone: "Europe/Berlin"})
	if err != nil {
		t.Fatal(err)
	}
	turns := make(chan error, 1)
	e.chats.onPrompt = func(ctx context.Context, target, label, prompt string) error {
		_, err := sess.Prompt(ctx, []agent.Content{agent.Text(prompt)}, nil)
		turns <- err
		return err
	}
	if _, err := sess.Prompt(t.Context(), []agent.Content{agent.Text("watch notes.txt every hour")}, nil); err != nil {
		t.Fatal(err)
	}
	jobs := e.s.List("chat-a")
	if len(jobs) != 1 || jobs[0].Name != "notes-watch" || jobs[0].Script != "cat notes.txt" {
		t.Fatalf("the model's schedule_job left %+v", jobs)
	}
	if err := e.s.Start(t.Context(), e.chats); err != nil {
		t.Fatal(err)
	}
	if ps := e.passAt(t, clock, e.s.Next(jobs[0])); ps.fired != 1 {
		t.Fatalf("the pass at the job's time fired %d job(s)", ps.fired)
	}
	msgs := e.chats.waitFor(t, 1)
	if msgs[0].Kind != "prompt" || msgs[0].Label != "⏰ Job notes-watch" {
		t.Fatalf("first message: %s %q", msgs[0].Kind, msgs[0].Label)
	}
	select {
	case err := <-turns:
		if err != nil {
			t.Fatalf("the watcher's turn: %v", err)
		}
	case <-time.After(hangGuard):
		t.Fatal("the watcher's turn never ended")
	}
	if n := e.faux.Pending(); n != 0 {
		t.Fatalf("the model has %d scripted answer(s) left", n)
	}
	reqs := e.faux.Requests()
	last := reqs[len(reqs)-1].Messages
	prompt := agent.TextOf(last[len(last)-1].Content)
	for name, text := range map[string]string{"Chats.Prompt": msgs[0].Text, "the model's request": prompt} {
		if strings.Contains(text, e.secret) {
			t.Errorf("%s holds the secret", name)
		}
		if !strings.Contains(text, "password: "+redactor.Token) || !strings.Contains(text, "Tell me what the file says.") {
			t.Errorf("%s lacks the redacted output and the prompt: %q", name, text)
		}
	}
}

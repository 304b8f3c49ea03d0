package chat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
	"github.com/volcanic/telegram-agent/internal/tmpfstest"
)

// echoHandler answers every request with "echo: <last user text>", and a
// summary request (one without tools) with a summary.
func echoHandler(faux *agenttest.FauxProvider, answer func(string) string) {
	faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		if len(req.Tools) == 0 {
			return agent.Response{Text: "the summary of the chat"}, nil
		}
		return agent.Response{Text: answer(lastUserText(req))}, nil
	})
}

// /compact on the chat's queue: nothing yet, a failed summary that changes
// nothing, then a compaction that /status reports.
func TestCompactCommand(t *testing.T) {
	faux := agenttest.NewFauxProvider()
	echoHandler(faux, func(s string) string { return "echo: " + s })
	h := newHarness(t, harnessConfig{provider: faux, agentOpts: []agent.Option{agent.WithCompactionKeepTurns(1)}})
	h.tg.SendText(userID, userID, "/compact")
	h.waitText(userID, "Nothing to compact yet")
	h.tg.SendText(userID, userID, "/status")
	status := h.waitText(userID, "Context: ")
	if !strings.Contains(status.Visible, "of 128,000 tokens (") || !strings.Contains(status.Visible, "Last compaction: never") {
		t.Errorf("status before compaction: %q", status.Visible)
	}
	for _, s := range []string{"first", "second"} {
		h.tg.SendText(userID, userID, s)
		h.waitText(userID, "echo: "+s)
	}

	faux.Enqueue(agenttest.FauxError(errors.New("the provider is down")))
	h.tg.SendText(userID, userID, "/compact")
	h.waitText(userID, "The summary failed, so nothing changed")
	sess, err := h.host.session(context.Background(), target{chatID: userID})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sess.Messages()); n != 4 {
		t.Errorf("after a failed summary the session has %d messages, want 4", n)
	}

	h.tg.SendText(userID, userID, "/tz Asia/Tokyo")
	h.waitText(userID, "Time zone set")
	h.tg.SendText(userID, userID, "/compact")
	h.waitText(userID, "Compacted older messages")
	if n := len(sess.Messages()); n >= 4 {
		t.Errorf("after /compact the session has %d messages, want fewer than 4", n)
	}
	before := len(h.tg.Messages(userID))
	h.tg.SendText(userID, userID, "/status")
	msgs := h.waitMessages(userID, "the status", func(m []telegramtest.Message) bool { return len(m) > before })
	last := msgs[len(msgs)-1].Visible
	if !strings.Contains(last, "Last compaction: ") || strings.Contains(last, "never") || !strings.Contains(last, "JST") {
		t.Errorf("status after compaction (want the time in the chat's zone): %q", last)
	}
}

// A compaction during a turn (the context passed the threshold) shows a
// short note, and the turn goes on.
func TestCompactionDuringTurnShowsNote(t *testing.T) {
	long := strings.Repeat("a long answer that fills the context window. ", 100)
	faux := agenttest.NewFauxProvider()
	echoHandler(faux, func(s string) string {
		if s == "two" {
			return "short answer"
		}
		return long
	})
	h := newHarness(t, harnessConfig{provider: faux, agentOpts: []agent.Option{
		agent.WithContextWindow(1200), agent.WithCompactionKeepTurns(1),
	}})
	h.tg.SendText(userID, userID, "one")
	h.waitText(userID, "a long answer")
	h.tg.SendText(userID, userID, "two")
	h.waitText(userID, "short answer")
	var got []string
	for _, m := range h.tg.Messages(userID) {
		switch {
		case m.Visible == compactedNote:
			got = append(got, "note")
		case m.Visible == "short answer":
			got = append(got, "answer")
		}
	}
	if diff := cmp.Diff([]string{"note", "answer"}, got); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
}

func TestGroupDigits(t *testing.T) {
	tests := []struct {
		n    int
		want string
	}{{0, "0"}, {999, "999"}, {1000, "1,000"}, {128000, "128,000"}, {1234567, "1,234,567"}, {-4500, "-4,500"}}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := groupDigits(tt.n); got != tt.want {
				t.Errorf("groupDigits(%d) = %q, want %q", tt.n, got, tt.want)
			}
		})
	}
}

func TestCompactedReport(t *testing.T) {
	tests := []struct {
		name          string
		before, after agent.ContextUsage
		want          string
	}{
		{"shrank", agent.ContextUsage{Tokens: 90000}, agent.ContextUsage{Tokens: 12000, Percent: 9},
			"🗜 Compacted older messages: the context went from 90,000 to 12,000 tokens (9% of the window)."},
		{"grew", agent.ContextUsage{Tokens: 1500}, agent.ContextUsage{Tokens: 1578, Percent: 1},
			"🗜 Compacted older messages, but the summary is no smaller than what it replaced: the context went from 1,500 to 1,578 tokens (1% of the window). Compacting pays off on a longer conversation."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, compactedReport(tt.before, tt.after)); diff != "" {
				t.Errorf("compactedReport (-want +got):\n%s", diff)
			}
		})
	}
}

// /compact of a short conversation with a long summary says the context
// did not shrink, and /status counts the system prompt.
func TestCompactReportsHonestly(t *testing.T) {
	faux := agenttest.NewFauxProvider()
	faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		if len(req.Tools) == 0 {
			return agent.Response{Text: strings.Repeat("a long summary ", 200)}, nil
		}
		return agent.Response{Text: "ok"}, nil
	})
	system := strings.Repeat("You are a helpful agent. ", 200)
	h := newHarness(t, harnessConfig{provider: faux, agentOpts: []agent.Option{
		agent.WithCompactionKeepTurns(1), agent.WithSystemPrompt(func(agent.SessionInfo) string { return system }),
	}})
	for range 2 {
		h.tg.SendText(userID, userID, "hi")
		h.waitMessages(userID, "an answer", func(m []telegramtest.Message) bool { return len(m) > 0 && m[len(m)-1].Visible == "ok" })
	}
	h.tg.SendText(userID, userID, "/status")
	status := h.waitText(userID, "Context: ")
	var shown string
	fmt.Sscan(strings.ReplaceAll(strings.SplitN(status.Visible, "Context: ", 2)[1], ",", ""), &shown)
	if n, _ := strconv.Atoi(shown); n < len(system)/4 {
		t.Errorf("the status does not count the %d-byte system prompt: %q", len(system), status.Visible)
	}
	h.tg.SendText(userID, userID, "/compact")
	h.waitText(userID, "the summary is no smaller than what it replaced")
}

// TestCompactOnFullDisk: a /compact whose summary cannot be written to the
// transcript changes nothing and says why in words, without the paths.
func TestCompactOnFullDisk(t *testing.T) {
	d := tmpfstest.Mount(t, 1<<20)
	rec := newLogRecorder()
	faux := agenttest.NewFauxProvider()
	long := strings.Repeat("a long summary ", 800)
	faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		if len(req.Tools) == 0 {
			d.Fill()
			return agent.Response{Text: long}, nil
		}
		return agent.Response{Text: "echo: " + lastUserText(req)}, nil
	})
	h := newHarness(t, harnessConfig{provider: faux, agentDir: d.Dir, agentOpts: []agent.Option{agent.WithCompactionKeepTurns(1)},
		opts: []Option{WithLogger(rec.logger())}})
	for _, s := range []string{"first", "second"} {
		h.tg.SendText(userID, userID, s)
		h.waitText(userID, s)
	}
	h.tg.SendText(userID, userID, "/compact")
	told := h.waitText(userID, "The summary could not be saved")
	if !strings.Contains(told.Visible, "disk is full") || strings.Contains(told.Visible, d.Dir) {
		t.Errorf("the chat was told %q, want the full disk named, without paths", told.Visible)
	}
	sess, err := h.host.session(context.Background(), target{chatID: userID})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(sess.Messages()); n != 4 {
		t.Errorf("after the summary could not be saved the session has %d messages, want 4", n)
	}
	rec.wait(t, "the episode's error", isLog(slog.LevelError, "the agent dir cannot be written"))
	d.Drain()
}

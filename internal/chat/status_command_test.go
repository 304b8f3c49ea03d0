package chat

import (
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// /status names the tool a turn waits for, with its argument and how long
// it has run, and the session by when it started.
func TestStatusShowsToolAndSession(t *testing.T) {
	faux := agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("bash", `{"command":"sleep 1000"}`)))
	h := newHarness(t, harnessConfig{provider: faux})
	h.tg.SendText(userID, userID, "wait")
	h.waitStatus(userID, "bash: sleep 1000")
	h.tg.SendText(userID, userID, "/status")
	status := h.waitText(userID, "Tool: bash: sleep 1000, for ")
	if !strings.Contains(status.Visible, "Session: the chat's first (") {
		t.Errorf("/status does not name the first session: %q", status.Visible)
	}
	h.tg.SendText(userID, userID, "/stop")
	h.waitText(userID, "⏹ Stopped")
	h.tg.SendText(userID, userID, "/new")
	h.waitText(userID, "New session started")
	before := 0
	for _, m := range h.tg.Messages(userID) {
		before = max(before, m.ID)
	}
	h.tg.SendText(userID, userID, "/status")
	var got string
	h.waitMessages(userID, "the second /status", func(msgs []telegramtest.Message) bool {
		for _, m := range msgs {
			if m.ID > before && strings.Contains(m.Visible, "Session: ") {
				got = m.Visible
				return true
			}
		}
		return false
	})
	if !strings.Contains(got, "Session: started "+time.Now().Format("Mon 2 Jan")) || strings.Contains(got, "Tool:") {
		t.Errorf("/status after /new: %q", got)
	}
}

func TestFormatWhen(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	tests := []struct {
		when time.Time
		want string
	}{
		{time.Date(2026, 12, 1, 9, 15, 0, 0, time.UTC), "Tue 1 Dec 09:15 UTC"},
		{time.Date(2027, 1, 4, 8, 0, 0, 0, time.UTC), "Mon 4 Jan 2027 08:00 UTC"},
		{time.Date(2025, 12, 31, 23, 0, 0, 0, time.UTC), "Wed 31 Dec 2025 23:00 UTC"},
	}
	for _, tt := range tests {
		if got := formatWhen(tt.when, now); got != tt.want {
			t.Errorf("formatWhen(%v) = %q, want %q", tt.when, got, tt.want)
		}
	}
}

func TestElapsed(t *testing.T) {
	for d, want := range map[time.Duration]string{
		12 * time.Second:                "12s",
		3*time.Minute + 5*time.Second:   "3m 05s",
		62*time.Minute + 10*time.Second: "1h 02m",
	} {
		if got := elapsed(d); got != want {
			t.Errorf("elapsed(%v) = %q, want %q", d, got, want)
		}
	}
}

package chat

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// twoEchoes is a turn that runs two commands, then answers "done".
func twoEchoes() *agenttest.FauxProvider {
	return agenttest.NewFauxProvider(
		agenttest.FauxToolCalls(agenttest.FauxCall("bash", `{"command":"echo one"}`)),
		agenttest.FauxToolCalls(agenttest.FauxCall("bash", `{"command":"echo two"}`)),
		agenttest.FauxText("done"))
}

// statusMessages returns the bot's messages that are tool statuses: every
// message but the answers and notices the test names.
func statusMessages(msgs []telegramtest.Message, answers ...string) []telegramtest.Message {
	var out []telegramtest.Message
	for _, m := range msgs {
		if m.File != nil || containsAny(m.Visible, answers) {
			continue
		}
		out = append(out, m)
	}
	return out
}

func containsAny(s string, subs []string) bool {
	for _, sub := range subs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// TestToolStatusModes checks what a finished turn leaves in each mode:
// every call (all), one folded line (last, the default), or no status at
// all (off).
func TestToolStatusModes(t *testing.T) {
	tests := []struct {
		mode string
		// want is the status message's text once the turn ended; "" means
		// no status message.
		want string
	}{
		{ToolStatusAll, "✅ bash: echo one\n✅ bash: echo two"},
		{"", "✅ 2 tool calls: bash ×2"},
		{ToolStatusLast, "✅ 2 tool calls: bash ×2"},
		{ToolStatusOff, ""},
	}
	for _, tt := range tests {
		t.Run(cmpOr(tt.mode, "default"), func(t *testing.T) {
			h := newHarness(t, harnessConfig{provider: twoEchoes(), toolStatus: tt.mode})
			h.tg.SendText(userID, userID, "run two")
			h.waitText(userID, "done")
			if tt.want == "" {
				// The answer is the last message: a status would have come
				// before it.
				if got := statusMessages(h.tg.Messages(userID), "done"); len(got) != 0 {
					t.Errorf("TOOL_STATUS=off showed %d status message(s): %q", len(got), got[0].Visible)
				}
				return
			}
			h.waitMessages(userID, "the status "+tt.want, func(msgs []telegramtest.Message) bool {
				st := statusMessages(msgs, "done")
				return len(st) == 1 && st[0].Visible == tt.want && !strings.Contains(st[0].ReplyMarkup, callbackStop)
			})
		})
	}
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// TestVerboseToggles checks that /verbose lists every call in its chat,
// and that a second /verbose folds them again; the choice is the chat's.
func TestVerboseToggles(t *testing.T) {
	faux := twoEchoes()
	h := newHarness(t, harnessConfig{provider: faux})
	before := h.lastID()
	h.tg.SendText(userID, userID, "/verbose")
	h.waitNewText(before, "every tool call is listed")
	if got := h.host.sessions.toolStatusMode("1001"); got != ToolStatusAll {
		t.Errorf("after /verbose the mode is %q, want all", got)
	}
	h.tg.SendText(userID, userID, "run two")
	h.waitText(userID, "done")
	h.waitText(userID, "✅ bash: echo one\n✅ bash: echo two")

	before = h.lastID()
	h.tg.SendText(userID, userID, "/verbose")
	h.waitNewText(before, "folded into one line")
	if got := h.host.sessions.toolStatusMode("1001"); got != ToolStatusLast {
		t.Errorf("after a second /verbose the mode is %q, want last", got)
	}
	if got := h.host.settings.get("1001").ToolStatus; got != "" {
		t.Errorf("the chat keeps %q, want nothing (the operator's mode)", got)
	}
}

// TestStatusesARestartCutAreEdited checks that the status of a turn a kill
// cut, left with its hourglass and Stop button, is edited by the next
// start-up to say so, its button gone.
func TestStatusesARestartCutAreEdited(t *testing.T) {
	tg := telegramtest.New(t)
	agentDir, next, ws := t.TempDir(), t.TempDir(), t.TempDir()
	ks := &killSwitch{next: &http.Transport{}}
	faux := agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("bash", `{"command":"sleep 1000"}`)))
	h1 := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: agentDir, workspace: ws,
		opts: []Option{withHTTPClient(&http.Client{Transport: ks})}})
	tg.SendText(userID, userID, "sleep")
	status, _ := h1.waitStatus(userID, "⏳ bash: sleep 1000")
	waitFor(t, "the status record", func() bool {
		data, _ := os.ReadFile(filepath.Join(agentDir, StatusFile))
		return bytes.Contains(data, []byte(`"msg":`+strconv.Itoa(status.ID)))
	})
	// The kill: the disk as it is now, and the host cut off from Telegram.
	for _, name := range []string{ledger.File, StatusFile} {
		data, err := os.ReadFile(filepath.Join(agentDir, name))
		if errors.Is(err, os.ErrNotExist) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(next, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	ks.dead.Store(true)
	h1.stop()

	h2 := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider(), tg: tg, agentDir: next, workspace: ws})
	h2.waitMessages(userID, "the cut status edited", func(msgs []telegramtest.Message) bool {
		for _, m := range msgs {
			if m.ID == status.ID {
				return strings.HasPrefix(m.Visible, "⏹ bash: sleep 1000") && strings.Contains(m.Visible, "Cut short by a restart") &&
					!strings.Contains(m.ReplyMarkup, callbackStop)
			}
		}
		return false
	})
	// The record starts afresh: the next start-up edits nothing again.
	if data, err := os.ReadFile(filepath.Join(next, StatusFile)); err != nil || len(data) != 0 {
		t.Errorf("the status record after the start-up holds %d bytes (err %v), want none", len(data), err)
	}
}

package chat

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// pendingEntries returns the journal's pending lines.
func pendingEntries(t *testing.T, dir string) []ledger.Entry {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, ledger.File))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The last line about an id wins, as when the journal is opened.
	var order []ledger.Origin
	last := map[ledger.Origin]ledger.Entry{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		var e ledger.Entry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		prev, seen := last[e.Origin]
		if !seen {
			order = append(order, e.Origin)
		}
		if e.Update == nil && e.Prompt == "" {
			e.Update, e.Scope, e.Label, e.Prompt = prev.Update, prev.Scope, prev.Label, prev.Prompt
		}
		last[e.Origin] = e
	}
	var out []ledger.Entry
	for _, o := range order {
		if e := last[o]; e.State == ledger.Queued {
			out = append(out, e)
		}
	}
	return out
}

// pendingMessages is pendingEntries without the scheduled prompts'.
func pendingMessages(t *testing.T, dir string) []ledger.Entry {
	t.Helper()
	var out []ledger.Entry
	for _, e := range pendingEntries(t, dir) {
		if !e.Origin.IsPrompt() {
			out = append(out, e)
		}
	}
	return out
}

// countVisible counts the bot's messages in chat that contain s.
func countVisible(msgs []telegramtest.Message, s string) int {
	n := 0
	for _, m := range msgs {
		if strings.Contains(m.Visible, s) {
			n++
		}
	}
	return n
}

// A message journaled by a bot that died before acknowledging it is
// delivered again by Telegram after the restart: it is reported as
// interrupted once and does not run again.
func TestJournaledUpdateRedeliveredAfterRestartDoesNotRunAgain(t *testing.T) {
	blocked := agenttest.NewFauxProvider(agenttest.FauxFunc(waitForCancel))
	tg := telegramtest.New(t)
	agentDir, ws := t.TempDir(), t.TempDir()
	h1 := newHarness(t, harnessConfig{provider: blocked, tg: tg, agentDir: agentDir, workspace: ws})
	tg.SendText(userID, userID, "an important message")
	waitFor(t, "the turn to start", func() bool { return len(blocked.Requests()) == 1 })
	h1.stop()
	pending := pendingEntries(t, agentDir)
	if len(pending) != 1 {
		t.Fatalf("pending journal entries = %d, want 1", len(pending))
	}
	// Telegram never heard the acknowledgement: the update is queued again.
	id := tg.EnqueueJSON(string(pending[0].Update))
	if id != pending[0].Origin.UpdateID() {
		t.Fatalf("re-queued update id %d, want %d", id, pending[0].Origin.UpdateID())
	}
	polls := len(tg.RequestsFor("getUpdates"))

	faux := agenttest.NewFauxProvider()
	h2 := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: agentDir, workspace: ws})
	h2.waitText(userID, "interrupted by a restart")
	waitFor(t, "the update to be acknowledged", func() bool { return tg.PendingUpdates() == 0 })
	if first := tg.RequestsFor("getUpdates")[polls]; first.Int("offset") != id+1 {
		t.Errorf("the first poll after the restart asked for offset %d, want %d", first.Int("offset"), id+1)
	}
	tg.SendText(userID, userID, "/help")
	h2.waitText(userID, "/retry")
	if n := len(faux.Requests()); n != 0 {
		t.Errorf("the re-delivered message ran again: %d model requests", n)
	}
	if n := countVisible(tg.Messages(userID), "interrupted by a restart"); n != 1 {
		t.Errorf("interrupted reports = %d, want 1", n)
	}
}

// An update that is already in the journal is skipped even when polling
// starts from Telegram's own position (a journal older than Telegram keeps
// updates); a journal entry without a time does not move the offset.
func TestJournaledUpdateIsSkipped(t *testing.T) {
	tests := []struct {
		name       string
		at         time.Time
		wantOffset int64 // of the first poll
	}{
		{"recent journal: polling starts after it", time.Now().Add(-time.Minute), 8},
		{"old journal: the update is skipped", time.Now().Add(-48 * time.Hour), 0},
		{"journal without times: the update is skipped", time.Time{}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := telegramtest.New(t)
			agentDir := t.TempDir()
			upd := models.Update{ID: 7, Message: &models.Message{
				ID: 1, Date: int(time.Now().Unix()), Text: "run me once",
				From: &models.User{ID: userID}, Chat: models.Chat{ID: userID, Type: models.ChatTypePrivate},
			}}
			tg.Enqueue(upd)
			raw, _ := json.Marshal(upd)
			e := ledger.Entry{Origin: ledger.Update(7), State: ledger.Answered, Scope: "1001", Update: raw}
			if !tt.at.IsZero() {
				e.At = tt.at.Unix()
			}
			line, _ := json.Marshal(e)
			if err := os.WriteFile(filepath.Join(agentDir, ledger.File), append(line, '\n'), 0o600); err != nil {
				t.Fatal(err)
			}
			faux := agenttest.NewFauxProvider()
			faux.Handle(ranUserText)
			h := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: agentDir})
			waitFor(t, "the updates to be acknowledged", func() bool { return tg.PendingUpdates() == 0 })
			if got := tg.RequestsFor("getUpdates")[0].Int("offset"); got != tt.wantOffset {
				t.Errorf("first poll offset = %d, want %d", got, tt.wantOffset)
			}
			tg.SendText(userID, userID, "/help")
			h.waitText(userID, "/retry")
			if got := len(faux.Requests()); got != 0 {
				t.Errorf("the journaled update ran: %d model requests", got)
			}
		})
	}
}

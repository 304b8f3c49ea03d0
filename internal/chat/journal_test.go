package chat

import (
	"bufio"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// pendingEntries returns the journal's pending lines.
func pendingEntries(t *testing.T, dir string) []journalEntry {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, JournalFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	// The last line about an id wins, as when the journal is opened.
	var order []int64
	last := map[int64]journalEntry{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	for sc.Scan() {
		var e journalEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		prev, seen := last[e.ID]
		if !seen {
			order = append(order, e.ID)
		}
		if e.Update == nil && e.Prompt == "" {
			e.Update, e.Scope, e.Label, e.Prompt = prev.Update, prev.Scope, prev.Label, prev.Prompt
		}
		last[e.ID] = e
	}
	var out []journalEntry
	for _, id := range order {
		if e := last[id]; e.State == statePending {
			out = append(out, e)
		}
	}
	return out
}

// pendingMessages is pendingEntries without the scheduled prompts'.
func pendingMessages(t *testing.T, dir string) []journalEntry {
	t.Helper()
	var out []journalEntry
	for _, e := range pendingEntries(t, dir) {
		if !e.isPrompt() {
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
	if id != pending[0].ID {
		t.Fatalf("re-queued update id %d, want %d", id, pending[0].ID)
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
			e := journalEntry{ID: 7, State: stateDone, Scope: "1001", Update: raw}
			if !tt.at.IsZero() {
				e.At = tt.at.Unix()
			}
			line, _ := json.Marshal(e)
			if err := os.WriteFile(filepath.Join(agentDir, JournalFile), append(line, '\n'), 0o600); err != nil {
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

// An update journaled as received (a command, a button press) and not
// handled before the bot died is handed out once after the restart, to be
// handled then, and its delivery again is skipped as seen; one older than
// Telegram keeps updates is not. Done, it is not handed out again.
func TestReceivedUpdateIsReplayed(t *testing.T) {
	dir := t.TempDir()
	logger := slog.New(slog.DiscardHandler)
	j, err := openJournal(dir, logger)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if err := j.write(
		journalEntry{ID: 7, State: stateReceived, Update: json.RawMessage(`{"update_id":7}`), At: now.Add(-2 * updateRetention).Unix()},
		journalEntry{ID: 9, State: stateReceived, Update: json.RawMessage(`{"update_id":9}`), At: now.Unix()},
		journalEntry{ID: 10, State: statePending, Scope: itoa64(userID), Update: json.RawMessage(`{"update_id":10}`), At: now.Unix()},
	); err != nil {
		t.Fatal(err)
	}
	j.close()
	reopen := func() *journal {
		t.Helper()
		j, err := openJournal(dir, logger)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(j.close)
		return j
	}
	j = reopen()
	var ids []int64
	for _, e := range j.replay() {
		ids = append(ids, e.ID)
	}
	got := map[string]any{"replayed": ids, "again": len(j.replay()), "seen 9": j.seen(9), "offset": j.resumeOffset(now)}
	want := map[string]any{"replayed": []int64{9}, "again": 0, "seen 9": true, "offset": int64(11)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after the restart (-want +got):\n%s", diff)
	}
	// Not handled yet: a crash now hands it out again.
	j.close()
	j = reopen()
	if n := len(j.replay()); n != 1 {
		t.Errorf("after a second restart %d entries are handed out, want the one still received", n)
	}
	if err := j.done(9); err != nil {
		t.Fatal(err)
	}
	j.close()
	if n := len(reopen().replay()); n != 0 {
		t.Errorf("once done, %d entries are handed out after the restart, want 0", n)
	}
}

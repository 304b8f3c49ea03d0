package chat

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
	"github.com/volcanic/telegram-agent/internal/tmpfstest"
)

// Two crashes, each with a turn running and a full queue behind it, leave
// more interrupted messages than the queue holds: /retry runs the oldest
// that fit and says how many are left, rather than having its own queue
// refuse the rest; the next /retry runs them, and each message runs once.
func TestRetryTakesWhatTheQueueHolds(t *testing.T) {
	tg := telegramtest.New(t)
	agentDir, ws := t.TempDir(), t.TempDir()
	blocked := func() *agenttest.FauxProvider {
		return agenttest.NewFauxProvider(agenttest.FauxFunc(waitForCancel))
	}
	perCrash := maxQueued + 1 // one running, a full queue behind it
	sent := 0
	for crash := range 2 {
		faux := blocked()
		h := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: agentDir, workspace: ws})
		if crash > 0 {
			h.waitMessages(userID, "the first crash's reports", func(ms []telegramtest.Message) bool {
				return countVisible(ms, "interrupted by a restart") == perCrash
			})
		}
		for range perCrash {
			tg.SendText(userID, userID, fmt.Sprintf("message %d", sent))
			sent++
			if sent%perCrash == 1 {
				waitFor(t, "the turn to start", func() bool { return len(faux.Requests()) == 1 })
			}
		}
		waitFor(t, "the messages to be journaled", func() bool { return len(pendingEntries(t, agentDir)) == perCrash })
		h.stop()
	}

	faux := agenttest.NewFauxProvider()
	faux.Handle(ranUserText)
	h := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: agentDir, workspace: ws})
	h.waitMessages(userID, "every report", func(ms []telegramtest.Message) bool {
		return countVisible(ms, "interrupted by a restart") == sent
	})
	ran := func(ms []telegramtest.Message) int { return countVisible(ms, "ran: message ") }
	tg.SendText(userID, userID, "/retry")
	h.waitText(userID, fmt.Sprintf("Running the oldest %d of your interrupted messages again, in order; send /retry again for the other %d", maxQueued, sent-maxQueued))
	h.waitMessages(userID, "the first retried batch", func(ms []telegramtest.Message) bool { return ran(ms) == maxQueued })
	for done := maxQueued; done < sent; {
		tg.SendText(userID, userID, "/retry")
		next := min(maxQueued, sent-done)
		done += next
		h.waitMessages(userID, "the next retried batch", func(ms []telegramtest.Message) bool { return ran(ms) == done })
	}
	tg.SendText(userID, userID, "/retry")
	msgs := h.waitMessages(userID, "nothing left", func(ms []telegramtest.Message) bool { return countVisible(ms, "Nothing to retry") == 1 })
	if n := countVisible(msgs, "so I did not take this one"); n != 0 {
		t.Errorf("/retry's own queue refused %d interrupted messages", n)
	}
	answers := map[string]int{}
	for _, m := range msgs {
		if strings.HasPrefix(m.Visible, "ran: ") {
			answers[m.Visible]++
		}
	}
	for i := range sent {
		if n := answers[fmt.Sprintf("ran: message %d", i)]; n != 1 {
			t.Errorf("message %d ran %d times, want once", i, n)
		}
	}
	if n := len(faux.Requests()); n != sent {
		t.Errorf("model requests = %d, want %d (each interrupted message once)", n, sent)
	}
}

// TestRetryOnFullDisk says /retry while the agent dir is full: the
// interrupted message cannot be journaled as running again, so it is not
// run (a crash would leave it interrupted in the file, never reported
// again, after the chat was told it runs); the user is told why, and the
// /retry after space is freed runs it once.
func TestRetryOnFullDisk(t *testing.T) {
	d := tmpfstest.Mount(t, 1<<20)
	tg := telegramtest.New(t)
	ws := t.TempDir()
	blocked := agenttest.NewFauxProvider(agenttest.FauxFunc(waitForCancel))
	h1 := newHarness(t, harnessConfig{provider: blocked, tg: tg, agentDir: d.Dir, workspace: ws})
	// Long enough that its journal line needs a page of its own.
	text := "cut by a crash " + strings.Repeat("x", os.Getpagesize()-600)
	tg.SendText(userID, userID, text)
	waitFor(t, "the turn to start", func() bool { return len(blocked.Requests()) == 1 })
	h1.stop()

	faux := agenttest.NewFauxProvider()
	faux.Handle(ranUserText)
	h2 := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: d.Dir, workspace: ws})
	h2.waitText(userID, "interrupted by a restart")
	waitFor(t, "the report to be journaled", func() bool {
		data, err := os.ReadFile(filepath.Join(d.Dir, ledger.File))
		return err == nil && strings.Contains(string(data), `"state":"interrupted"`)
	})
	d.Fill()
	tg.SendText(userID, userID, "/retry")
	msgs := h2.waitMessages(userID, "the answer to /retry", func(ms []telegramtest.Message) bool {
		return countVisible(ms, "🔁")+countVisible(ms, "/retry once") > 0
	})
	if countVisible(msgs, "disk is full") == 0 || countVisible(msgs, "🔁") != 0 {
		t.Errorf("/retry on a full disk: the chat shows %s, want it told the disk is full, nothing run", describe(msgs))
	}
	if n := len(faux.Requests()); n != 0 {
		t.Errorf("the message ran while it could not be journaled: %d model requests", n)
	}
	d.Drain()
	tg.SendText(userID, userID, "/retry")
	h2.waitText(userID, "ran: cut by a crash")
	if n := len(faux.Requests()); n != 1 {
		t.Errorf("model requests after the /retry with space: %d, want 1", n)
	}
}

package chat

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// One restart that cuts a chat with a message running and another queued
// reports each of them, in reply to it, and /retry runs both, in order,
// each once.
func TestEveryInterruptedMessageIsReportedAndRetried(t *testing.T) {
	blocked := agenttest.NewFauxProvider(agenttest.FauxFunc(waitForCancel))
	tg := telegramtest.New(t)
	agentDir, ws := t.TempDir(), t.TempDir()
	h1 := newHarness(t, harnessConfig{provider: blocked, tg: tg, agentDir: agentDir, workspace: ws})
	first := tg.SendText(userID, userID, "the running message")
	waitFor(t, "the turn to start", func() bool { return len(blocked.Requests()) == 1 })
	second := tg.SendText(userID, userID, "the queued message")
	waitFor(t, "both to be journaled", func() bool { return len(pendingEntries(t, agentDir)) == 2 })
	h1.stop()

	faux := agenttest.NewFauxProvider()
	faux.Handle(ranUserText)
	h2 := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: agentDir, workspace: ws})
	msgs := h2.waitMessages(userID, "two interrupted reports", func(ms []telegramtest.Message) bool {
		return countVisible(ms, "interrupted by a restart") == 2
	})
	replied := map[int]bool{}
	for _, m := range msgs {
		if strings.Contains(m.Visible, "interrupted by a restart") {
			replied[m.ReplyTo] = true
		}
	}
	if !replied[first.ID] || !replied[second.ID] {
		t.Errorf("the reports reply to %v, want both %d and %d", replied, first.ID, second.ID)
	}
	tg.SendText(userID, userID, "/retry")
	h2.waitText(userID, "ran: the running message")
	h2.waitText(userID, "ran: the queued message")
	tg.SendText(userID, userID, "/retry")
	h2.waitText(userID, "Nothing to retry")
	reqs := faux.Requests()
	if len(reqs) != 2 {
		t.Fatalf("model requests = %d, want 2 (each interrupted message once)", len(reqs))
	}
	if got := lastUserText(reqs[0]); got != "the running message" {
		t.Errorf("the first retried message is %q, want the running one first", got)
	}
}

// A crash at any moment after the answer reached Telegram never reports
// the answered message as interrupted: the journal, as Telegram receives
// the answer, already says it was answered.
func TestAnsweredMessageIsNeverReportedAfterACrash(t *testing.T) {
	tg := telegramtest.New(t)
	agentDir, ws := t.TempDir(), t.TempDir()
	crashDir, restartDir := t.TempDir(), t.TempDir()
	var once sync.Once
	var snapErr error
	tg.Handle("sendMessage", func(r telegramtest.Request) (any, *telegramtest.APIError) {
		if strings.Contains(r.Params["text"], "the answer") {
			// What a SIGKILL right now, with the answer sent, would leave.
			once.Do(func() {
				var b []byte
				if b, snapErr = os.ReadFile(filepath.Join(agentDir, ledger.File)); snapErr == nil {
					snapErr = errors.Join(os.WriteFile(filepath.Join(crashDir, ledger.File), b, 0o600),
						os.WriteFile(filepath.Join(restartDir, ledger.File), b, 0o600))
				}
			})
		}
		return models.Message{ID: 900, Date: 1, Chat: models.Chat{ID: userID, Type: models.ChatTypePrivate}, Text: r.Params["text"]}, nil
	})
	faux := agenttest.NewFauxProvider()
	faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		return agent.Response{Text: "the answer"}, nil
	})
	h := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: agentDir, workspace: ws})
	tg.SendText(userID, userID, "answer me once")
	waitFor(t, "the answer to be sent", func() bool { return len(tg.RequestsContaining("the answer")) > 0 })
	h.stop()
	if snapErr != nil {
		t.Fatalf("journal snapshot: %v", snapErr)
	}
	j, err := ledger.Open(crashDir, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	if got := j.ToReport(); len(got) != 0 {
		t.Errorf("an answered message is reported as interrupted after a crash: %d entries", len(got))
	}
	if got, _ := j.TakeInterrupted("1001", -1); len(got) != 0 {
		t.Errorf("/retry would answer an answered message again: %d entries", len(got))
	}
	j.Close()

	// The bot restarted from that crash tells the chat that the answer may
	// have been cut short (the crash came while it was being sent), and
	// /retry does not run the message again.
	tg2 := telegramtest.New(t)
	// The same Telegram would go on numbering its updates: this fake's first
	// one carries the journaled id, which is skipped.
	tg2.SendText(userID, userID, "/help")
	again := agenttest.NewFauxProvider()
	h2 := newHarness(t, harnessConfig{provider: again, tg: tg2, agentDir: restartDir})
	h2.waitText(userID, "while the answer to this message was being sent")
	tg2.SendText(userID, userID, "/retry")
	h2.waitText(userID, "Nothing to retry")
	if n := len(again.Requests()); n != 0 {
		t.Errorf("the answered message ran again after the restart: %d model requests", n)
	}
}

// A report Telegram refuses (here a 404: the method is gone) is sent again
// after the next start-up: the message counts as reported only once its
// report went out, else one failed notice would leave it interrupted
// without a word. The same holds for the report of an answer cut short.
func TestUnsentReportIsSentAfterTheNextStart(t *testing.T) {
	blocked := agenttest.NewFauxProvider(agenttest.FauxFunc(waitForCancel))
	tg := telegramtest.New(t)
	agentDir, ws := t.TempDir(), t.TempDir()
	h1 := newHarness(t, harnessConfig{provider: blocked, tg: tg, agentDir: agentDir, workspace: ws})
	msg := tg.SendText(userID, userID, "cut by a crash")
	waitFor(t, "the turn to start", func() bool { return len(blocked.Requests()) == 1 })
	h1.stop()

	tg.DisableMethod("sendMessage")
	h2 := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider(), tg: tg, agentDir: agentDir, workspace: ws})
	waitFor(t, "the report to be tried", func() bool {
		return len(tg.RequestsContaining("interrupted by a restart")) >= 1
	})
	h2.stop()
	tg.EnableMethod("sendMessage")

	faux := agenttest.NewFauxProvider()
	faux.Handle(ranUserText)
	h3 := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: agentDir, workspace: ws})
	report := h3.waitText(userID, "interrupted by a restart")
	if report.ReplyTo != msg.ID {
		t.Errorf("the report replies to %d, want %d", report.ReplyTo, msg.ID)
	}
	tg.SendText(userID, userID, "/retry")
	h3.waitText(userID, "ran: cut by a crash")
	h3.stop()

	// Reported and retried: a fourth start reports nothing.
	h4 := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider(), tg: tg, agentDir: agentDir, workspace: ws})
	tg.SendText(userID, userID, "/retry")
	msgs := h4.waitMessages(userID, "the last /retry's answer", func(ms []telegramtest.Message) bool {
		return countVisible(ms, "Nothing to retry") == 1
	})
	if n := countVisible(msgs, "This message was interrupted by a restart"); n != 1 {
		t.Errorf("%d reports, want the one after the failed one: %s", n, describe(msgs))
	}
}

// A turn whose model answer comes in whole only after the shutdown told
// the chat that the turn was interrupted (the answer came in just as
// SIGTERM did) is not sent by the dying bot: the chat was promised a
// report and /retry, and gets them, and /retry answers it once. Sent, the
// chat would be told both that it was interrupted and its answer.
func TestAnswerCompleteAfterTheRestartNoticeIsRetriedOnce(t *testing.T) {
	tg := telegramtest.New(t)
	agentDir, ws := t.TempDir(), t.TempDir()
	var h1 *harness
	started := make(chan struct{})
	faux := agenttest.NewFauxProvider(agenttest.FauxFunc(func(ctx context.Context, _ agent.Request, _ func(string)) (agent.Response, error) {
		close(started)
		<-ctx.Done()
		// The model's answer had arrived whole when the turn was cut.
		return agent.Response{Text: "the whole answer"}, nil
	}))
	h1 = newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: agentDir, workspace: ws})
	tg.SendText(userID, userID, "answer me as the bot stops")
	<-started
	h1.stop()
	msgs := tg.Messages(userID)
	if n := countVisible(msgs, "this turn was interrupted"); n != 1 {
		t.Errorf("the chat got %d restarting notices, want 1: %s", n, describe(msgs))
	}
	if n := countVisible(msgs, "the whole answer"); n != 0 {
		t.Errorf("the answer went out after the chat was told its turn was interrupted: %s", describe(msgs))
	}
	if got := pendingEntries(t, agentDir); len(got) != 1 {
		t.Errorf("%d pending entries, want the interrupted message's", len(got))
	}
	again := agenttest.NewFauxProvider()
	again.Handle(ranUserText)
	h2 := newHarness(t, harnessConfig{provider: again, tg: tg, agentDir: agentDir, workspace: ws})
	h2.waitText(userID, "This message was interrupted by a restart")
	tg.SendText(userID, userID, "/retry")
	h2.waitText(userID, "ran: answer me as the bot stops")
	h2.stop()
	if n := countVisible(tg.Messages(userID), "ran: answer me as the bot stops"); n != 1 {
		t.Errorf("the message was answered %d times, want once: %s", n, describe(tg.Messages(userID)))
	}
}

// A report Telegram does not take for a while (5xx answers, one after the
// other) goes out once it does, while the bot runs: a restart, the only
// other way it is sent, may never come.
func TestReportIsSentOnceTelegramTakesIt(t *testing.T) {
	blocked := agenttest.NewFauxProvider(agenttest.FauxFunc(waitForCancel))
	tg := telegramtest.New(t)
	agentDir, ws := t.TempDir(), t.TempDir()
	h1 := newHarness(t, harnessConfig{provider: blocked, tg: tg, agentDir: agentDir, workspace: ws})
	msg := tg.SendText(userID, userID, "cut by a crash")
	waitFor(t, "the turn to start", func() bool { return len(blocked.Requests()) == 1 })
	h1.stop()

	const failures = 12 // more than any fixed number of tries the report had
	tg.FailNext("sendMessage", failures, 502, "Bad Gateway", 0)
	faux := agenttest.NewFauxProvider()
	faux.Handle(ranUserText)
	h2 := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: agentDir, workspace: ws,
		opts: []Option{withReportPause(10 * time.Millisecond)}})
	report := h2.waitText(userID, "interrupted by a restart")
	if report.ReplyTo != msg.ID {
		t.Errorf("the report replies to %d, want %d", report.ReplyTo, msg.ID)
	}
	if n := len(tg.RequestsContaining("interrupted by a restart")); n != failures+1 {
		t.Errorf("the report was tried %d times, want %d (every failure, then once more)", n, failures+1)
	}
	tg.SendText(userID, userID, "/retry")
	h2.waitText(userID, "ran: cut by a crash")
}

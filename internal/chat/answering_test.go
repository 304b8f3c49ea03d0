package chat

import (
	"context"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
	"github.com/volcanic/telegram-agent/internal/tmpfstest"
)

// TestAnswerWithheldWhileItsMarkCannotBeJournaled fills the disk before
// the journal's "answering" mark of a turn, and kills the bot before the
// disk is freed: the journal on disk still says the message is pending,
// so the restart reports it as interrupted. Its answer must not have gone
// out before the kill (the chat is told the turn could not be saved
// instead), or /retry would answer it twice. The disk fills either
// between the turn's transcript and the mark, or as the model's answer
// has streamed, so that the transcript cannot be written either and the
// turn fails with its whole answer streamed (found by the soak with seed
// 2026120121: the answer went out with the error appended).
func TestAnswerWithheldWhileItsMarkCannotBeJournaled(t *testing.T) {
	for _, tc := range []struct {
		name string
		// inModel fills the disk in the model's answer, after it
		// streamed: before the transcript is written.
		inModel bool
	}{
		{"after the transcript", false},
		{"before the transcript", true},
	} {
		t.Run(tc.name, func(t *testing.T) { answerWithheldWhileItsMarkCannotBeJournaled(t, tc.inModel) })
	}
}

func answerWithheldWhileItsMarkCannotBeJournaled(t *testing.T, inModel bool) {
	// The message's pending line is to end 5 bytes short of the journal's
	// first page, so that the mark (a line of some 30 bytes) needs a new
	// page, which the full disk refuses.
	page := os.Getpagesize()
	// A one-letter text makes a line of len(text) bytes less one.
	text := "crash m1 " + strings.Repeat("x", page-5-(pendingLineLength(t, "x")-1)-len("crash m1 "))
	d := tmpfstest.Mount(t, 1<<20)
	tg := telegramtest.New(t)
	var answered, filled atomic.Bool
	fill := func() {
		if info, err := os.Stat(filepath.Join(d.Dir, ledger.File)); err != nil {
			t.Errorf("the journal before the mark: %v", err)
		} else if info.Size() != int64(page-5) {
			t.Errorf("the journal before the mark has %d bytes, want %d", info.Size(), page-5)
		}
		if err := d.Top(); err != nil {
			t.Errorf("filling the disk: %v", err)
		}
	}
	faux := agenttest.NewFauxProvider()
	faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		answered.Store(true)
		res, err := ranUserText(ctx, req, onText)
		if inModel && filled.CompareAndSwap(false, true) {
			onText(res.Text)
			fill()
		}
		return res, err
	})
	// The first journal write after the model answered is the mark; the
	// transcript was written before it.
	hook := func(written bool) {
		if !inModel && !written && answered.Load() && filled.CompareAndSwap(false, true) {
			fill()
		}
	}
	ks := &killSwitch{next: &http.Transport{}}
	h := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: d.Dir, opts: []Option{
		withHTTPClient(&http.Client{Transport: ks}),
		withJournal(ledger.WithHook(hook)),
	}})
	m := tg.SendText(userID, userID, text)
	answer := "ran: " + text
	outcome := func(b telegramtest.Message) bool {
		return strings.HasPrefix(b.Visible, answer) || b.ReplyTo == m.ID && strings.HasPrefix(b.Visible, "⚠️")
	}
	waitChat(t, tg, "the first outcome", func(msgs []telegramtest.Message) bool {
		return countWhere(msgs, outcome) > 0
	})
	if !filled.Load() {
		t.Fatal("the disk was not filled before the answering mark")
	}
	if got := countVisible(tg.Messages(userID), answer); got > 0 {
		t.Errorf("the answer went out while its mark could not be journaled (%d times)", got)
	}
	if got := countWhere(tg.Messages(userID), func(b telegramtest.Message) bool {
		return b.ReplyTo == m.ID && strings.Contains(b.Visible, "disk is full")
	}); got != 1 {
		t.Errorf("the chat was told %d times that the turn could not be saved, want once:%s", got, describe(tg.Messages(userID)))
	}

	// The kill, before the disk is freed: what the file holds now is what
	// the next start reads.
	next := t.TempDir()
	data, err := os.ReadFile(filepath.Join(d.Dir, ledger.File))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(next, ledger.File), data, 0o600); err != nil {
		t.Fatal(err)
	}
	ks.dead.Store(true)
	h.stop()

	faux2 := agenttest.NewFauxProvider()
	faux2.Handle(ranUserText)
	newHarness(t, harnessConfig{provider: faux2, tg: tg, agentDir: next})
	reported := func(b telegramtest.Message) bool {
		return b.ReplyTo == m.ID && strings.Contains(b.Visible, "interrupted by a restart")
	}
	waitChat(t, tg, "the report after the restart", func(msgs []telegramtest.Message) bool {
		return countWhere(msgs, reported) > 0
	})
	report := 0
	for _, b := range tg.Messages(userID) {
		if reported(b) {
			report = b.ID
		}
	}
	tg.SendText(userID, userID, "/retry")
	waitChat(t, tg, "the answer after /retry", func(msgs []telegramtest.Message) bool {
		return countWhere(msgs, func(b telegramtest.Message) bool { return b.Visible == answer && b.ID > report }) > 0
	})
	if got := countVisible(tg.Messages(userID), answer); got != 1 {
		t.Errorf("the message was answered %d times, want once:%s", got, describe(tg.Messages(userID)))
	}
}

// waitChat waits until the user's chat satisfies cond, and fails the test
// after 15 s naming what it waited for.
func waitChat(t *testing.T, tg *telegramtest.Server, what string, cond func([]telegramtest.Message) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	if err := tg.WaitUntil(ctx, func() bool { return cond(tg.Messages(userID)) }); err != nil {
		t.Fatalf("waiting for %s: %v; the chat: %s", what, err, describe(tg.Messages(userID)))
	}
}

// countWhere counts the messages for which match holds.
func countWhere(msgs []telegramtest.Message, match func(telegramtest.Message) bool) int {
	n := 0
	for _, b := range msgs {
		if match(b) {
			n++
		}
	}
	return n
}

// pendingLineLength returns the length, newline included, of the journal
// line a host writes for the first message of a chat when it says text.
func pendingLineLength(t *testing.T, text string) int {
	t.Helper()
	dir := t.TempDir()
	tg := telegramtest.New(t)
	faux := agenttest.NewFauxProvider()
	faux.Handle(ranUserText)
	h := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: dir})
	tg.SendText(userID, userID, text)
	waitChat(t, tg, "the calibration's answer", func(msgs []telegramtest.Message) bool {
		return countVisible(msgs, "ran: "+text) > 0
	})
	h.stop()
	data, err := os.ReadFile(filepath.Join(dir, ledger.File))
	if err != nil {
		t.Fatal(err)
	}
	first, _, ok := strings.Cut(string(data), "\n")
	if !ok || !strings.Contains(first, `"state":"pending"`) {
		t.Fatalf("the journal's first line is not the message's pending entry (%d bytes)", len(first))
	}
	return len(first) + 1
}

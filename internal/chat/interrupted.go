package chat

import (
	"context"
	"encoding/json"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/backoff"
	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/chat/turnview"
)

// reportInterrupted tells each chat about every message a crash or restart
// cut short, each on its own (in reply to it), so nothing is lost silently:
// one crash can cut a running message and the ones queued behind it. The
// notices go out while polling starts. A message counts as reported in the
// journal only once its notice was sent (see report): one that a crash
// cuts off, or that Telegram refuses for good, is reported again after the
// next start-up.
func (h *Host) reportInterrupted() {
	for _, e := range h.journal.reported() {
		t, err := parseTarget(e.Scope)
		if err != nil {
			continue
		}
		text := "⚠️ This message was interrupted by a restart; send it again, or say /retry to run every interrupted message again."
		if e.isPrompt() {
			h.logger.Info("reporting a scheduled prompt interrupted by a restart", "scope", e.Scope, "label", e.Label)
			text = interruptedPromptText(e.Label)
		} else {
			h.logger.Info("reporting a message interrupted by a restart", "scope", e.Scope, "update_id", e.ID)
		}
		// Not needed any more once /retry took the message: it runs, and a
		// report after its answer would say it was lost.
		needed := func() bool { return h.journal.unreportedInterrupted(e.Scope, e.ID) }
		h.report(t, text, entryMessageID(e), needed, func() {
			h.journaled(h.journal.markReported(e.Scope, e.ID))
		})
	}
	for _, e := range h.journal.cutShort() {
		t, err := parseTarget(e.Scope)
		if err != nil {
			continue
		}
		text := "⚠️ A restart came while the answer to this message was being sent; if it did not arrive whole, send the message again."
		if e.isPrompt() {
			h.logger.Info("reporting a scheduled prompt's answer a restart may have cut short", "scope", e.Scope, "label", e.Label)
			text = "⚠️ A restart came while the answer of the scheduled job “" + e.Label + "” was being sent; it may not have arrived whole."
		} else {
			h.logger.Info("reporting an answer a restart may have cut short", "scope", e.Scope, "update_id", e.ID)
		}
		h.report(t, text, entryMessageID(e), nil, func() {
			h.journaled(h.journal.markCutReported(e.ID))
		})
	}
}

// interruptedPromptText is the report of the scheduled prompt label that a
// crash or a restart interrupted: it has no message to reply to.
func interruptedPromptText(label string) string {
	return "⚠️ The scheduled job “" + label + "” was interrupted by a restart; say /retry to run it again."
}

// reportPauseMax bounds the pause between two tries of a report.
const reportPauseMax = time.Minute

// report sends text to t in reply to replyTo, a notice the chat must get
// because a journal entry waits for it (the report of an interrupted
// message, the busy answer of a refused one), and calls sent once it went
// out. A try that fails for a passing reason (a 5xx, a 429, no answer) is
// made again after a pause that doubles from reportPause up to
// reportPauseMax, for as long as the host runs: a restart, which reports
// the entry anew, may never come. One that Telegram refuses for good (a
// 403: the user blocked the bot; a 400) is left for the next start-up,
// and so is one the shutdown ends. The outbox's bound does not drop a
// report: each stands for an entry the journal holds anyway. needed, when
// set, is asked before each try: a report no longer needed is dropped.
func (h *Host) report(t target, text string, replyTo int, needed func() bool, sent func()) {
	h.reportTry(t, text, replyTo, needed, sent, 0)
}

func (h *Host) reportTry(t target, text string, replyTo int, needed func() bool, sent func(), try int) {
	h.out(t).MustNotice(func(ctx context.Context, n turnview.Noticer) {
		if needed != nil && !needed() {
			return
		}
		err := n.Say(ctx, text, replyTo)
		switch {
		case err == nil:
			sent()
			return
		case h.view.NoticesEnded():
			return
		case ctx.Err() == nil && botapi.ClassOf(err) != botapi.Transient && botapi.ClassOf(err) != botapi.RateLimited:
			h.logger.Warn("a report was refused; it is sent again after the next start-up", "scope", t.String())
			return
		}
		pause := backoff.Policy{Base: h.reportPause, Max: reportPauseMax}.Delay(try)
		// Called from the outbox's goroutine, which the group counts:
		// adding to it cannot race its Wait at shutdown.
		h.view.Go(func() {
			if backoff.Sleep(h.turnCtx, pause) {
				h.reportTry(t, text, replyTo, needed, sent, try+1)
			}
		})
	})
}

// entryMessageID returns the id of the chat message e's update carries (0
// when it cannot be read, or e is a scheduled prompt's), for a notice to
// reply to.
func entryMessageID(e journalEntry) int {
	if e.Update == nil {
		return 0
	}
	var u models.Update
	if json.Unmarshal(e.Update, &u) != nil {
		return 0
	}
	switch {
	case u.Message != nil:
		return u.Message.ID
	case u.EditedMessage != nil:
		return u.EditedMessage.ID
	}
	return 0
}

package chat

import (
	"context"
	"encoding/json"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
)

// reportInterrupted tells each chat about every message a crash or restart
// cut short, each on its own (in reply to it), so nothing is lost silently:
// one crash can cut a running message and the ones queued behind it. The
// notices go out while polling starts. A message counts as reported in the
// journal only once its notice was sent (see ledger.Reporter): one that a crash
// cuts off, or that Telegram refuses for good, is reported again after the
// next start-up.
func (h *Host) reportInterrupted() {
	for _, e := range h.journal.ToReport() {
		t, err := parseTarget(e.Scope)
		if err != nil {
			continue
		}
		text := "⚠️ This message was interrupted by a restart; send it again, or say /retry to run every interrupted message again."
		if e.Origin.IsPrompt() {
			h.logger.Info("reporting a scheduled prompt interrupted by a restart", "scope", e.Scope, "label", e.Label)
			text = interruptedPromptText(e.Label)
		} else {
			h.logger.Info("reporting a message interrupted by a restart", "scope", e.Scope, "update_id", e.Origin.UpdateID())
		}
		// Not needed any more once /retry took the message: it runs, and a
		// report after its answer would say it was lost.
		needed := func() bool { return h.journal.Unreported(e.Scope, e.Origin) }
		h.report(t, text, entryMessageID(e), needed, func() {
			h.journaled(h.journal.MarkReported(e.Scope, e.Origin))
		})
	}
	for _, e := range h.journal.CutShort() {
		t, err := parseTarget(e.Scope)
		if err != nil {
			continue
		}
		text := "⚠️ A restart came while the answer to this message was being sent; if it did not arrive whole, send the message again."
		if e.Origin.IsPrompt() {
			h.logger.Info("reporting a scheduled prompt's answer a restart may have cut short", "scope", e.Scope, "label", e.Label)
			text = "⚠️ A restart came while the answer of the scheduled job “" + e.Label + "” was being sent; it may not have arrived whole."
		} else {
			h.logger.Info("reporting an answer a restart may have cut short", "scope", e.Scope, "update_id", e.Origin.UpdateID())
		}
		h.report(t, text, entryMessageID(e), nil, func() {
			h.journaled(h.journal.MarkCutReported(e.Origin))
		})
	}
}

// interruptedPromptText is the report of the scheduled prompt label that a
// crash or a restart interrupted: it has no message to reply to.
func interruptedPromptText(label string) string {
	return "⚠️ The scheduled job “" + label + "” was interrupted by a restart; say /retry to run it again."
}

// report sends text to t in reply to replyTo, a notice the chat must get
// because a journal entry waits for it, and calls sent once it went out;
// needed, when set, is asked before each try (see ledger.Reporter, which
// says how it is tried again).
func (h *Host) report(t target, text string, replyTo int, needed func() bool, sent func()) {
	h.reports.Report(reportOutlet{h, t}, text, replyTo, needed, sent)
}

// newReporter returns the host's reporter: its tries pause from
// reportPause while the turns may run, and end with the notices.
func (h *Host) newReporter() *ledger.Reporter {
	return &ledger.Reporter{Passing: passing, Pause: h.reportPause, Life: h.turnCtx, Outbox: h.noticeCtx, Pauses: &h.notices, Logger: h.logger}
}

// passing reports whether a send that failed with err may succeed later:
// a 5xx, a 429, no answer.
func passing(err error) bool {
	c := botapi.ClassOf(err)
	return c == botapi.Transient || c == botapi.RateLimited
}

// reportOutlet is chat t as a report reaches it: its outbox, which takes a
// report beyond its bound, and the notice sender.
type reportOutlet struct {
	h *Host
	t target
}

func (o reportOutlet) Post(try func(context.Context)) { o.h.enqueueNotice(o.t, true, try) }

func (o reportOutlet) Send(ctx context.Context, text string, replyTo int) error {
	return o.h.sendNoticeErr(ctx, o.t, text, replyTo)
}

func (o reportOutlet) String() string { return o.t.String() }

// entryMessageID returns the id of the chat message e's update carries (0
// when it cannot be read, or e is a scheduled prompt's), for a notice to
// reply to.
func entryMessageID(e ledger.Entry) int {
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

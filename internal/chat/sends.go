package chat

import (
	"context"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/chat/turnview"
)

// StatusFile in the agent dir lists the tool status messages open now, for
// the next start-up to edit the ones a crash cut (see turnview.StatusFile).
const StatusFile = turnview.StatusFile

// out returns t's outlet: every message to t goes through its verbs
// (Answer, Notice, Preview).
func (h *Host) out(t target) turnview.Outlet { return h.view.To(t.view()) }

// Notify sends text to target as it is (redacted, split when long), outside
// any turn.
func (h *Host) Notify(ctx context.Context, scope, text string) error {
	t, err := parseTarget(scope)
	if err != nil {
		return err
	}
	return h.sendText(ctx, t, text, 0)
}

// Refused reports whether err, from Notify, is a refusal for good
// (botapi.Refused): a target that is no chat, a blocked bot, a chat gone.
func (h *Host) Refused(err error) bool { return botapi.Refused(err) }

// post runs send as a Notice of t.
func (h *Host) post(t target, send func(ctx context.Context, n turnview.Noticer)) {
	h.out(t).Notice(send)
}

// notice sends text to t as a Notice, plain and split when long.
func (h *Host) notice(t target, text string, replyTo int) {
	h.out(t).Notice(turnview.Say(text, replyTo))
}

// sendText sends plain text to t as an Answer (every try), split when
// long.
func (h *Host) sendText(ctx context.Context, t target, text string, replyTo int) error {
	_, err := h.out(t).Answer(ctx, turnview.Message{Text: text, ReplyTo: replyTo, Split: true})
	return err
}

// logSendError logs a send to t Telegram did not take.
func (h *Host) logSendError(what string, t target, err error) { h.out(t).LogSendError(what, err) }

// removeButtons removes the inline buttons of t's message msgID.
func (h *Host) removeButtons(ctx context.Context, t target, msgID int) error {
	return h.out(t).RemoveButtons(ctx, msgID)
}

// shortened cuts a text a user or the agent wrote (a job's name, an
// argument echoed back): the Bot API client's Shorten, redacted first.
func (h *Host) shortened(s string, n int) string { return h.api.Shorten(s, n) }

// counted returns n with the noun in its singular or plural form.
func counted(n int, one, many string) string { return turnview.Counted(n, one, many) }

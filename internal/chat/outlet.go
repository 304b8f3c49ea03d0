package chat

import (
	"context"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/chat/turnview"
)

// outlet is how the front end's handlers (commands, buttons, strangers,
// attachments) talk to a chat outside a turn's answer: ordered notices,
// reports a journal entry waits for, and plain texts. *Host provides it
// over turnview's verbs; the handlers hold it rather than the host, so
// that what they may do is this list.
type outlet interface {
	// post runs send as a Notice of t: off the polling goroutine, after
	// the chat's earlier notices; n sends on the notice client.
	post(t target, send func(ctx context.Context, n turnview.Noticer))
	// notice posts text as a transient notice.
	notice(t target, text string, replyTo int)
	// report sends text until Telegram takes it, then calls sent.
	report(t target, text string, replyTo int, needed func() bool, sent func())
	// sendText sends text as an Answer (every try).
	sendText(ctx context.Context, t target, text string, replyTo int) error
	// logSendError logs a send Telegram did not take.
	logSendError(what string, t target, err error)
	// removeButtons removes the inline buttons of a message (a Preview).
	removeButtons(ctx context.Context, t target, msgID int) error
	// shortened cuts a text a user or the agent wrote, redacted first.
	shortened(s string, n int) string
}

// menu sends and edits the messages with buttons that answer a command
// (/model, /jobs) through a notice's n: two tries at most, a failure
// logged under what.
type menu struct {
	out outlet
}

// send sends text with buttons to t, in reply to replyTo.
func (m menu) send(ctx context.Context, n turnview.Noticer, t target, what, text string, buttons *models.InlineKeyboardMarkup, replyTo int) {
	if _, err := n.Send(ctx, turnview.Message{Text: text, Buttons: buttons, ReplyTo: replyTo}); err != nil {
		m.out.logSendError(what, t, err)
	}
}

// edit replaces the text and the buttons of t's message msgID.
func (m menu) edit(ctx context.Context, n turnview.Noticer, t target, what string, msgID int, text string, buttons *models.InlineKeyboardMarkup) {
	if _, err := n.Send(ctx, turnview.Message{Edit: msgID, Text: text, Buttons: buttons}); err != nil {
		m.out.logSendError(what, t, err)
	}
}

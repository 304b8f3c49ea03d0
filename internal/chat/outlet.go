package chat

import (
	"context"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
)

// outlet is how the front end's handlers (commands, buttons, strangers,
// attachments) talk to a chat outside a turn's answer: ordered notices,
// reports a journal entry waits for, and plain texts. *Host provides it;
// the handlers hold it rather than the host, so that what they may do is
// this list.
type outlet interface {
	// post runs send off the polling goroutine, after the chat's earlier
	// notices.
	post(t target, send func(ctx context.Context))
	// notice posts text as a transient notice.
	notice(t target, text string, replyTo int)
	// sendNotice sends text as a notice now, and reports whether it went.
	sendNotice(ctx context.Context, t target, text string, replyTo int) bool
	// report sends text until Telegram takes it, then calls sent.
	report(t target, text string, replyTo int, needed func() bool, sent func())
	// sendText sends text on the answer's client (every try).
	sendText(ctx context.Context, t target, text string, replyTo int) error
	// messageParams builds a sendMessage for t.
	messageParams(t target, text string, mode models.ParseMode, replyTo int) botapi.Message
	// logSendError logs a send Telegram did not take.
	logSendError(what string, t target, err error)
	// removeButtons removes the inline buttons of a message.
	removeButtons(ctx context.Context, t target, msgID int) error
	// shortened cuts a text a user or the agent wrote, redacted first.
	shortened(s string, n int) string
}

// menu sends and edits the messages with buttons that answer a command
// (/model, /jobs) on the quick client: two tries at most, a failure logged
// under what.
type menu struct {
	out   outlet
	quick *botapi.Client
}

// send sends text with buttons to t, in reply to replyTo.
func (m menu) send(ctx context.Context, t target, what, text string, buttons *models.InlineKeyboardMarkup, replyTo int) {
	p := m.out.messageParams(t, text, "", replyTo)
	p.Buttons = buttons
	if _, err := m.quick.SendMessage(ctx, p); err != nil {
		m.out.logSendError(what, t, err)
	}
}

// edit replaces the text and the buttons of t's message msgID.
func (m menu) edit(ctx context.Context, t target, what string, msgID int, text string, buttons *models.InlineKeyboardMarkup) {
	if _, err := m.quick.EditMessageText(ctx, botapi.Edit{ChatID: t.chatID, MessageID: msgID, Text: text, Buttons: buttons}); err != nil {
		m.out.logSendError(what, t, err)
	}
}

package chat

import (
	"context"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
	"github.com/volcanic/telegram-agent/internal/chat/turnview"
)

// outlet is how the front end's handlers (commands, buttons, strangers,
// attachments) talk to a chat outside a turn's answer: ordered notices,
// reports a journal entry waits for, and plain texts. chatOutlet provides
// it over turnview's verbs; the handlers hold it rather than the host, so
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

// chatOutlet is the outlet over the view's verbs: what it sends goes
// through turnview, what it shortens through the Bot API client's Shorten,
// and its reports through the host's reporter.
type chatOutlet struct {
	view *turnview.View
	api  *botapi.Client
	// reports sends what a journal entry waits for.
	reports *ledger.Reporter
}

// to returns t's turnview outlet: every message to t goes through its
// verbs (Answer, Notice, Preview).
func (o chatOutlet) to(t target) turnview.Outlet { return o.view.To(t.view()) }

func (o chatOutlet) post(t target, send func(ctx context.Context, n turnview.Noticer)) {
	o.to(t).Notice(send)
}

// notice sends text plain and split when long.
func (o chatOutlet) notice(t target, text string, replyTo int) {
	o.to(t).Notice(turnview.Say(text, replyTo))
}

// report sends text to t in reply to replyTo, a notice the chat must get
// because a journal entry waits for it, and calls sent once it went out;
// needed, when set, is asked before each try (see ledger.Reporter, which
// says how it is tried again).
func (o chatOutlet) report(t target, text string, replyTo int, needed func() bool, sent func()) {
	o.reports.Report(reportOutlet{o.to(t), t}, text, replyTo, needed, sent)
}

// sendText sends plain text split when long.
func (o chatOutlet) sendText(ctx context.Context, t target, text string, replyTo int) error {
	_, err := o.to(t).Answer(ctx, turnview.Message{Text: text, ReplyTo: replyTo, Split: true})
	return err
}

func (o chatOutlet) logSendError(what string, t target, err error) { o.to(t).LogSendError(what, err) }

func (o chatOutlet) removeButtons(ctx context.Context, t target, msgID int) error {
	return o.to(t).RemoveButtons(ctx, msgID)
}

// shortened is the Bot API client's Shorten, which redacts first.
func (o chatOutlet) shortened(s string, n int) string { return o.api.Shorten(s, n) }

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

package chat

import (
	"context"
	"strings"

	"github.com/go-telegram/bot/models"
	"github.com/volcanic/telegram-agent/internal/chat/turnview"
)

// Callback data is "<kind>:<argument>": the kind picks the handler in
// callbackRoutes, the argument is the handler's (a turn id, a job id).
const (
	// callbackStop is the kind of the Stop button under a tool status
	// message: "stop:<turn id>". A button whose turn has ended, or one
	// from before turns had ids (the bare "stop"), stops nothing.
	callbackStop = "stop"
	// callbackCancelJob is the kind of a job's cancel button in /jobs:
	// "cancel:<job id>".
	callbackCancelJob = "cancel"
)

// press is one button press from an allowed user on a message the bot
// can see.
type press struct {
	query *models.CallbackQuery
	// target is the chat (or topic) of the button's message; msgID is the
	// message's id.
	target target
	msgID  int
	// arg is the callback data after "<kind>:".
	arg string
	// answer answers the press (its toast: "" for none) through a
	// notice's n.
	answer func(ctx context.Context, n turnview.Noticer, text string)
}

// callbackRoute handles the presses of one kind of button. Its handler
// runs on the polling goroutine: it acts at once when it must (a Stop) and
// posts what talks to Telegram (see outlet.post).
type callbackRoute struct {
	kind string
	// handle picks the kind's handler from the commander.
	handle func(c *commander) func(press)
}

// callbackRoutes returns the kinds of buttons the host answers.
func callbackRoutes() []callbackRoute {
	return []callbackRoute{
		{kind: callbackStop, handle: func(c *commander) func(press) { return c.pressStop }},
		{kind: callbackCancelJob, handle: func(c *commander) func(press) { return c.jobs.press }},
		{kind: callbackApproval, handle: func(c *commander) func(press) { return c.approvals.pressApproval }},
		{kind: callbackRevoke, handle: func(c *commander) func(press) { return c.approvals.pressRevoke }},
		{kind: callbackModel, handle: func(c *commander) func(press) { return c.models.press }},
	}
}

// handleCallback answers an inline button by its kind; a press of an
// unknown kind, or on a message the bot cannot see, gets an empty answer.
func (h *Host) handleCallback(q *models.CallbackQuery) {
	answer := func(ctx context.Context, n turnview.Noticer, text string) {
		if _, err := n.Send(ctx, turnview.Message{Callback: q.ID, Text: text}); err != nil {
			h.logger.Debug("answerCallbackQuery", "err", err)
		}
	}
	if !h.allowed[q.From.ID] {
		h.logger.Debug("ignored a button press from a user who is not allowed", "user_id", q.From.ID)
		return
	}
	if q.Message.Message == nil {
		h.view.Unordered(func(ctx context.Context, n turnview.Noticer) { answer(ctx, n, "") })
		return
	}
	t := targetOf(q.Message.Message)
	kind, arg, _ := strings.Cut(q.Data, ":")
	for _, r := range callbackRoutes() {
		if r.kind == kind {
			r.handle(&h.commander)(press{query: q, target: t, msgID: q.Message.Message.ID, arg: arg, answer: answer})
			return
		}
	}
	h.out.post(t, func(ctx context.Context, n turnview.Noticer) { answer(ctx, n, "") })
}

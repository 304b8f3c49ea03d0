package chat

import (
	"context"
	"strings"

	"github.com/go-telegram/bot/models"
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
	// answer answers the press (its toast: "" for none); one try.
	answer func(ctx context.Context, text string)
}

// callbackRoute handles the presses of one kind of button. handle runs on
// the polling goroutine: it acts at once when it must (a Stop) and posts
// what talks to Telegram (see post).
type callbackRoute struct {
	kind   string
	handle func(h *Host, p press)
}

// callbackRoutes returns the kinds of buttons the host answers.
func callbackRoutes() []callbackRoute {
	return []callbackRoute{
		{kind: callbackStop, handle: (*Host).pressStop},
		{kind: callbackCancelJob, handle: (*Host).pressCancelJob},
		{kind: callbackApproval, handle: (*Host).pressApproval},
		{kind: callbackRevoke, handle: (*Host).pressRevoke},
		{kind: callbackModel, handle: (*Host).pressModel},
	}
}

// handleCallback answers an inline button by its kind; a press of an
// unknown kind, or on a message the bot cannot see, gets an empty answer.
func (h *Host) handleCallback(q *models.CallbackQuery) {
	answer := func(ctx context.Context, text string) {
		if err := h.quick.AnswerCallbackQuery(ctx, q.ID, text); err != nil {
			h.logger.Debug("answerCallbackQuery", "err", err)
		}
	}
	if !h.allowed[q.From.ID] {
		h.logger.Debug("ignored a button press from a user who is not allowed", "user_id", q.From.ID)
		return
	}
	if q.Message.Message == nil {
		h.notices.Go(func() {
			ctx, cancel := context.WithTimeout(h.noticeCtx, noticeTimeout)
			defer cancel()
			answer(ctx, "")
		})
		return
	}
	t := targetOf(q.Message.Message)
	kind, arg, _ := strings.Cut(q.Data, ":")
	for _, r := range callbackRoutes() {
		if r.kind == kind {
			r.handle(h, press{query: q, target: t, msgID: q.Message.Message.ID, arg: arg, answer: answer})
			return
		}
	}
	h.post(t, func(ctx context.Context) { answer(ctx, "") })
}

// pressStop handles a Stop button: it stops its own turn at once, or, when
// that turn has ended (or the button names none), says so and removes the
// button.
func (h *Host) pressStop(p press) {
	msg, r := staleStop, stopResult{stale: true}
	if p.arg != "" {
		msg, r = h.stopChat(p.target, p.arg)
	}
	t := p.target
	if len(r.droppedIDs) > 0 {
		// The chat is told what was dropped, in words that stay; the
		// dropped messages are done once it was.
		h.post(t, func(ctx context.Context) { p.answer(ctx, msg) })
		h.report(t, msg, 0, nil, func() { h.journalDone(r.droppedIDs...) })
		return
	}
	h.post(t, func(ctx context.Context) {
		p.answer(ctx, msg)
		switch {
		case r.stopped:
			h.sendNotice(ctx, t, "⏹ Stopped.", 0)
		case msg == staleStop:
			if err := h.removeButtons(ctx, t, p.msgID); err != nil {
				h.logger.Debug("removing a stale Stop button failed", "scope", t.String(), "err", err)
			}
		}
	})
}

// pressCancelJob handles a job's cancel button.
func (h *Host) pressCancelJob(p press) {
	h.post(p.target, func(ctx context.Context) {
		h.cancelJob(ctx, p.target, p.msgID, p.arg, func(text string) { p.answer(ctx, text) })
	})
}

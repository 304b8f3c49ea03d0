package chat

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/volcanic/telegram-agent/internal/chat/botapi"

	"github.com/volcanic/telegram-agent/internal/chat/markup"
)

// finishTimeout bounds the delivery of a turn's final answer: long enough to
// wait out a generous retry_after, short enough that a dead Telegram does
// not hold the chat forever. A shutdown cuts it to shutdownFinishGrace.
const (
	finishTimeout       = 60 * time.Second
	shutdownFinishGrace = time.Second
)

// finishContext returns the context a turn's answer is delivered with: not
// cancelled with the turn (a stopped turn's answer is still delivered), ended
// by finishTimeout, or shortly after the host starts shutting down.
func (h *Host) finishContext(ctx context.Context) (context.Context, context.CancelFunc) {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	stop := context.AfterFunc(h.turnCtx, func() {
		t := time.AfterFunc(shutdownFinishGrace, cancel)
		context.AfterFunc(fctx, func() { t.Stop() })
	})
	return fctx, func() { stop(); cancel() }
}

// deliver sends parts in order; the first edits editID when it is set (and
// goes out as a new message when the edit cannot be done). Every part gets
// the retry policy; a part that still fails does not stop the others: the
// chat is told that the answer was cut there, the later parts follow, and
// the failed parts are tried once more at the end, so no text is dropped
// while Telegram accepts anything at all. A 403 (the user blocked the bot)
// or the end of ctx stops the delivery. When Telegram rejects the markup of
// the first part, deliver returns that error at once, having sent nothing,
// so the caller can send the whole text plain; a later part whose markup is
// rejected goes out as its visible text.
func (h *Host) deliver(ctx context.Context, t target, parts []string, mode models.ParseMode, editID, replyTo int) error {
	parts = nonBlank(parts)
	var failed []int
	var last error
	for i, part := range parts {
		edit, reply := 0, 0
		if i == 0 {
			edit, reply = editID, replyTo
		}
		err := h.sendPart(ctx, t, part, mode, edit, reply)
		if err != nil && botapi.IsBadMarkup(err) {
			if i == 0 {
				return err
			}
			err = h.sendPart(ctx, t, markup.Visible(part), "", 0, 0)
		}
		if err == nil {
			continue
		}
		h.logSendError("answer", t, err)
		if botapi.ClassOf(err) == botapi.Forbidden || ctx.Err() != nil {
			return err
		}
		last = err
		failed = append(failed, i)
		if len(parts) > 1 {
			note := fmt.Sprintf("⚠️ The answer was cut here: Telegram did not accept part %d of %d. It follows once Telegram accepts it.", i+1, len(parts))
			if err := h.sendPart(ctx, t, note, "", 0, 0); err != nil {
				h.logSendError("cut note", t, err)
			}
		}
	}
	if len(failed) == 0 {
		return nil
	}
	last = nil
	for _, i := range failed {
		part := parts[i]
		head := ""
		if len(parts) > 1 {
			head = fmt.Sprintf("(part %d of %d, sent late)\n", i+1, len(parts))
		}
		err := h.sendPart(ctx, t, escapeFor(mode, head)+part, mode, 0, 0)
		if err != nil && botapi.IsBadMarkup(err) {
			err = h.sendPart(ctx, t, head+markup.Visible(part), "", 0, 0)
		}
		if err != nil {
			h.logSendError("answer (late part)", t, err)
			last = err
			if botapi.ClassOf(err) == botapi.Forbidden || ctx.Err() != nil {
				break
			}
		}
	}
	return last
}

// sendPart sends one part: an edit of editID when it is set, falling back
// to a new message when the edit cannot be done (the message is gone, or
// Telegram kept refusing); a rejected markup and a 403 are returned as they
// are.
func (h *Host) sendPart(ctx context.Context, t target, part string, mode models.ParseMode, editID, replyTo int) error {
	if editID != 0 {
		_, err := h.api.EditMessageText(ctx, botapi.Edit{ChatID: t.chatID, MessageID: editID, Text: part, ParseMode: mode})
		if err == nil || botapi.IsBadMarkup(err) || botapi.ClassOf(err) == botapi.Forbidden || ctx.Err() != nil {
			return err
		}
		h.logger.Warn("the streamed message cannot be edited; sending the answer as a new message", "scope", t.String(), "err", err)
	}
	_, err := h.api.SendMessage(ctx, h.messageParams(t, part, mode, replyTo))
	return err
}

// nonBlank drops the parts that hold only white space.
func nonBlank(parts []string) []string {
	out := parts[:0:0]
	for _, p := range parts {
		if strings.TrimSpace(p) != "" {
			out = append(out, p)
		}
	}
	return out
}

// escapeFor escapes s for mode.
func escapeFor(mode models.ParseMode, s string) string {
	if mode == models.ParseModeHTML {
		return markup.EscapeText(s)
	}
	return s
}

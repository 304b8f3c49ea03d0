package turnview

import (
	"context"
	"fmt"
	"strings"
	"time"

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

// Answer sends m with every try the retry policy gives (a retry_after is
// waited out), until ctx ends; a turn's outcome passes a FinishContext.
// It returns the id of the message sent or edited.
//
// With m.Split, m.Text is a whole answer: split into parts that fit (HTML
// or plain, by m.HTML), the first replacing m.Edit (a new message when
// that edit cannot be done) and answering m.ReplyTo. A part that still
// fails does not stop the others: the chat is told the answer was cut
// there, the later parts follow, and the failed parts are tried once more
// at the end, so no text is dropped while Telegram takes anything at all.
// A 403 (the user blocked the bot) or the end of ctx stops it. When
// Telegram rejects the markup of the first part, the whole answer goes out
// as m.Plain, split; a later part whose markup is rejected goes out as its
// visible text. The id returned is then 0.
func (o Outlet) Answer(ctx context.Context, m Message) (int, error) {
	if !m.Split {
		return o.send(ctx, o.v.api, m)
	}
	if !m.HTML {
		return 0, o.deliver(ctx, markup.SplitPlain(m.Text, 0), m)
	}
	err := o.deliver(ctx, markup.SplitMessage(m.Text, 0), m)
	if err == nil || !botapi.IsBadMarkup(err) {
		return 0, err
	}
	o.v.Logger.Debug("telegram rejected the HTML; sending the answer as plain text")
	m.HTML = false
	return 0, o.deliver(ctx, markup.SplitPlain(m.Plain, 0), m)
}

// deliver sends parts in order for Answer, m saying how (see there).
func (o Outlet) deliver(ctx context.Context, parts []string, m Message) error {
	parts = nonBlank(parts)
	var failed []int
	var last error
	for i, part := range parts {
		edit, reply := 0, 0
		if i == 0 {
			edit, reply = m.Edit, m.ReplyTo
		}
		err := o.sendPart(ctx, Message{Text: part, HTML: m.HTML, Silent: m.Silent, Edit: edit, ReplyTo: reply})
		if err != nil && botapi.IsBadMarkup(err) {
			if i == 0 {
				return err
			}
			err = o.sendPart(ctx, Message{Text: markup.Visible(part), Silent: m.Silent})
		}
		if err == nil {
			continue
		}
		o.logSendError("answer", err)
		if botapi.ClassOf(err) == botapi.Forbidden || ctx.Err() != nil {
			return err
		}
		last = err
		failed = append(failed, i)
		if len(parts) > 1 {
			note := fmt.Sprintf("⚠️ The answer was cut here: Telegram did not accept part %d of %d. It follows once Telegram accepts it.", i+1, len(parts))
			if err := o.sendPart(ctx, Message{Text: note}); err != nil {
				o.logSendError("cut note", err)
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
		err := o.sendPart(ctx, Message{Text: escapeFor(m.HTML, head) + part, HTML: m.HTML, Silent: m.Silent})
		if err != nil && botapi.IsBadMarkup(err) {
			err = o.sendPart(ctx, Message{Text: head + markup.Visible(part), Silent: m.Silent})
		}
		if err != nil {
			o.logSendError("answer (late part)", err)
			last = err
			if botapi.ClassOf(err) == botapi.Forbidden || ctx.Err() != nil {
				break
			}
		}
	}
	return last
}

// sendPart sends one part: an edit of m.Edit when it is set, falling back
// to a new message when the edit cannot be done (the message is gone, or
// Telegram kept refusing); a rejected markup and a 403 are returned as they
// are.
func (o Outlet) sendPart(ctx context.Context, m Message) error {
	if m.Edit != 0 {
		_, err := o.send(ctx, o.v.api, m)
		if err == nil || botapi.IsBadMarkup(err) || botapi.ClassOf(err) == botapi.Forbidden || ctx.Err() != nil {
			return err
		}
		o.v.Logger.Warn("the streamed message cannot be edited; sending the answer as a new message", "scope", o.t.String(), "err", err)
		m.Edit = 0
	}
	_, err := o.send(ctx, o.v.api, m)
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

// escapeFor escapes s for a part in HTML when html is set.
func escapeFor(html bool, s string) string {
	if html {
		return markup.EscapeText(s)
	}
	return s
}

// FinishContext returns the context a turn's answer is delivered with:
// not cancelled with the turn (a stopped turn's answer is still
// delivered), ended by finishTimeout, or shortly after the host starts
// shutting down (Settings.Shutdown).
func (v *View) FinishContext(ctx context.Context) (context.Context, context.CancelFunc) {
	fctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), finishTimeout)
	stop := context.AfterFunc(v.Shutdown, func() {
		t := time.AfterFunc(shutdownFinishGrace, cancel)
		context.AfterFunc(fctx, func() { t.Stop() })
	})
	return fctx, func() { stop(); cancel() }
}

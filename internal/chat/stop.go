package chat

import (
	"context"
	"strings"

	"github.com/volcanic/telegram-agent/internal/chat/turnview"
)

// nothingRunning is /stop's answer when there was nothing to stop.
const nothingRunning = "Nothing is running."

// staleStop is the answer to a Stop button whose turn has ended.
const staleStop = "That turn already ended."

// stopCommand handles /stop: the chat's running item stops, its queued
// messages go.
func (c *commander) stopCommand(_ context.Context, in *inbound, reply func(string)) {
	msg, r := c.stop(in.target, "")
	if len(r.droppedIDs) == 0 {
		reply(msg)
		return
	}
	// The answer is all the chat is told about the messages dropped.
	c.out.report(in.target, msg, in.msg.ID, nil, func() { c.queues.journalDone(r.droppedIDs...) })
}

// stop cancels t's running item and drops its queued messages; a queued
// /new or /compact still runs, next. A Stop button's turnID limits it to
// that turn: when another one runs, or none, it does nothing and says that
// turn already ended. It returns what to tell the user and what was
// stopped or dropped: the caller marks the dropped messages done once the
// chat was told.
func (c *commander) stop(t target, turnID string) (string, stopResult) {
	w := c.queues.existingWorker(t)
	if w == nil {
		if turnID != "" {
			return staleStop, stopResult{stale: true}
		}
		return nothingRunning, stopResult{}
	}
	r := w.stop(turnID)
	if r.stale {
		return staleStop, r
	}
	var parts []string
	switch {
	case r.stopped && r.dropped > 0:
		parts = append(parts, "⏹ Stopped the running turn and dropped "+counted(r.dropped, "queued message", "queued messages")+".")
	case r.stopped:
		parts = append(parts, "⏹ Stopped the running turn.")
	case r.dropped > 0:
		parts = append(parts, "⏹ Dropped "+counted(r.dropped, "queued message", "queued messages")+".")
	}
	for _, k := range r.kept {
		switch k {
		case itemNew:
			parts = append(parts, "The new session you asked for starts now.")
		case itemCompact:
			parts = append(parts, "The compaction you asked for runs now.")
		}
	}
	if len(parts) == 0 {
		return nothingRunning, r
	}
	return strings.Join(parts, " "), r
}

// pressStop handles a Stop button: it stops its own turn at once, or, when
// that turn has ended (or the button names none), says so and removes the
// button.
func (c *commander) pressStop(p press) {
	msg, r := staleStop, stopResult{stale: true}
	if p.arg != "" {
		msg, r = c.stop(p.target, p.arg)
	}
	t := p.target
	if len(r.droppedIDs) > 0 {
		// The chat is told what was dropped, in words that stay; the
		// dropped messages are done once it was.
		c.out.post(t, func(ctx context.Context, n turnview.Noticer) { p.answer(ctx, n, msg) })
		c.out.report(t, msg, 0, nil, func() { c.queues.journalDone(r.droppedIDs...) })
		return
	}
	c.out.post(t, func(ctx context.Context, n turnview.Noticer) {
		p.answer(ctx, n, msg)
		switch {
		case r.stopped:
			_ = n.Say(ctx, "⏹ Stopped.", 0)
		case msg == staleStop:
			if err := c.out.removeButtons(ctx, t, p.msgID); err != nil {
				c.logger.Debug("removing a stale Stop button failed", "scope", t.String(), "err", err)
			}
		}
	})
}

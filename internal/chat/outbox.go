package chat

import (
	"context"
	"time"

	"github.com/volcanic/telegram-agent/internal/chat/markup"
)

// maxNotices bounds the notices waiting to be sent to one chat; beyond it
// a notice is dropped (and logged), since Telegram is not taking them.
const maxNotices = 50

// noticeTimeout bounds the sending of one notice, retry_after included.
const noticeTimeout = 30 * time.Second

// post runs send for t off the polling goroutine, after t's earlier
// notices, so that polling never waits on Telegram: a reply to a command,
// the "queued" notice, a callback answer. The notices of a chat go out in
// order, one goroutine per chat while it has any.
func (h *Host) post(t target, send func(ctx context.Context)) {
	h.enqueueNotice(t, false, send)
}

// enqueueNotice is post; a notice that must go out (a report, see
// Host.report) is queued even beyond maxNotices.
func (h *Host) enqueueNotice(t target, must bool, send func(ctx context.Context)) {
	key := t.String()
	h.outMu.Lock()
	defer h.outMu.Unlock()
	q, draining := h.outbox[key]
	if len(q) >= maxNotices && !must {
		h.logger.Warn("too many notices waiting for telegram; dropped one", "scope", key)
		return
	}
	h.outbox[key] = append(q, send)
	if !draining {
		h.notices.Go(func() { h.drainOutbox(key) })
	}
}

// drainOutbox sends key's notices until none is left.
func (h *Host) drainOutbox(key string) {
	for {
		h.outMu.Lock()
		q := h.outbox[key]
		if len(q) == 0 {
			delete(h.outbox, key)
			h.outMu.Unlock()
			return
		}
		send := q[0]
		h.outbox[key] = q[1:]
		h.outMu.Unlock()
		ctx, cancel := context.WithTimeout(h.noticeCtx, noticeTimeout)
		send(ctx)
		cancel()
	}
}

// notice sends text to t as a transient notice: off the polling goroutine,
// with at most two tries (Host.quick), split when long.
func (h *Host) notice(t target, text string, replyTo int) {
	h.post(t, func(ctx context.Context) { h.sendNotice(ctx, t, text, replyTo) })
}

// sendNotice sends text to t through the notice sender; a part that
// fails ends it (logged). It reports whether the whole text went out.
func (h *Host) sendNotice(ctx context.Context, t target, text string, replyTo int) bool {
	return h.sendNoticeErr(ctx, t, text, replyTo) == nil
}

// sendNoticeErr is sendNotice, returning the error of the part that failed.
func (h *Host) sendNoticeErr(ctx context.Context, t target, text string, replyTo int) error {
	for i, part := range nonBlank(markup.SplitPlain(text, 0)) {
		if i > 0 {
			replyTo = 0
		}
		if _, err := h.quick.SendMessage(ctx, h.messageParams(t, part, "", replyTo)); err != nil {
			h.logSendError("notice", t, err)
			return err
		}
	}
	return nil
}

// waitNotices waits up to grace for the notices being sent, then cancels
// the rest and waits for them to end.
func (h *Host) waitNotices(grace time.Duration) {
	done := make(chan struct{})
	go func() { h.notices.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(grace):
		h.cancelNotices()
		<-done
	}
	h.cancelNotices()
}

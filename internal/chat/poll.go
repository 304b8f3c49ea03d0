package chat

import (
	"context"
	"encoding/json"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/backoff"
	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
)

// HeartbeatFile is the file in the agent dir that polling touches after
// every successful getUpdates, and webhook mode after every update taken
// and every healthy check of the webhook (the healthcheck reads its age).
const HeartbeatFile = "heartbeat"

// allowedUpdates returns the update types the host asks for.
func allowedUpdates() []string { return []string{"message", "edited_message", "callback_query"} }

// pollSource is the update source of long polling (getUpdates).
type pollSource struct{ h *Host }

// run deletes any webhook first, since Telegram refuses getUpdates while
// one is set (a bot switched back from webhook mode), then polls.
func (p pollSource) run(ctx context.Context, take func(context.Context, []json.RawMessage) bool) error {
	if p.h.deleteWebhook(ctx) {
		p.h.poll(ctx, take)
	}
	return nil
}

// deleteWebhook calls deleteWebhook until it succeeds, and reports
// whether it did before ctx ended: polling never starts while a webhook
// may still be set.
func (h *Host) deleteWebhook(ctx context.Context) bool {
	for failures := 0; ctx.Err() == nil; failures++ {
		err := h.api.DeleteWebhook(ctx)
		if err == nil {
			return true
		}
		if ctx.Err() != nil {
			break
		}
		delay := h.retry.Backoff(failures)
		h.logger.Error("deleteWebhook failed; polling waits until the webhook is removed", "err", err, "delay", delay)
		h.pollSleep(ctx, delay)
	}
	return false
}

// poll runs the getUpdates loop until ctx is done. Each batch is journaled
// before its updates are acknowledged (by the next request's offset); the
// heartbeat is touched after every successful call whose batch was
// journaled. Polling starts after
// the highest update of a recent journal, so an update the bot journaled
// but died before acknowledging is not delivered again. It never gives up
// on an error: a 429 waits retry_after, a 409 (another instance polls the
// same token) logs a clear error and backs off, anything else backs off.
// A batch the journal cannot take (a full disk) is asked for again, with
// the same offset, after a back-off of its own (journalRetry).
func (h *Host) poll(ctx context.Context, take func(context.Context, []json.RawMessage) bool) {
	offset := h.journal.ResumeOffset(time.Now())
	if offset > 0 {
		h.logger.Debug("polling from after the last journaled update", "offset", offset)
	}
	failures, unjournaled, polling := 0, 0, false
	for ctx.Err() == nil {
		// Until Telegram has answered once, ask without waiting, so that
		// "polling Telegram" and the first heartbeat do not wait out a
		// long poll of an idle bot.
		timeout := h.pollTimeout
		if !polling {
			timeout = 0
		}
		raws, err := h.api.GetUpdates(ctx, offset, timeout, allowedUpdates())
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			delay := h.retry.Backoff(failures)
			switch botapi.ClassOf(err) {
			case botapi.RateLimited:
				delay = max(botapi.RetryAfter(err), time.Second)
				h.logger.Warn("getUpdates rate limited", "retry_after", delay)
			case botapi.Conflict:
				h.logger.Error("getUpdates conflict: another instance is polling this bot token; stop it (or remove its webhook). Backing off", "err", err, "delay", delay)
			case botapi.Permanent:
				h.logger.Error("getUpdates failed", "err", err, "delay", delay)
			default:
				h.logger.Warn("getUpdates failed", "err", err, "delay", delay)
			}
			failures++
			h.pollSleep(ctx, delay)
			continue
		}
		failures = 0
		if !polling {
			// Logged once Telegram has answered, so the line means it works.
			polling = true
			h.logger.Info("polling Telegram", "allowed_users", len(h.cfg.AllowedUserIDs), "model", h.cfg.Model)
		}
		var taken bool
		if offset, taken = h.received(ctx, take, raws, offset); taken {
			unjournaled = 0
			continue
		}
		// The journal cannot be written (the disk is full): the batch
		// comes again with the same offset, after a back-off that grows
		// to journalRetryMax.
		h.pollSleep(ctx, journalRetry.Delay(unjournaled))
		unjournaled++
	}
}

// journalRetry is the back-off of polling while the journal cannot be
// written: from a second up to journalRetryMax, so that the bot takes its
// messages soon after space is freed.
var journalRetry = backoff.Policy{Base: time.Second, Max: journalRetryMax, Jitter: 0.5}

// journalRetryMax is the longest pause between two tries of a batch the
// journal could not take.
const journalRetryMax = 10 * time.Second

// received hands the answer of a successful getUpdates to take and
// returns the next offset, which acknowledges the batch, and whether take
// took it: the offset stays when take refused it (the journal cannot be
// written), so Telegram sends it again. The heartbeat is touched only when
// the batch was taken: while messages cannot be, the healthcheck must go
// unhealthy.
func (h *Host) received(ctx context.Context, take func(context.Context, []json.RawMessage) bool, raws []json.RawMessage, offset int64) (int64, bool) {
	if !take(ctx, raws) {
		return offset, false
	}
	h.touchHeartbeat()
	return nextOffset(raws, offset), true
}

// nextOffset returns the offset after the highest update_id of raws (those
// that do not parse as updates included), or offset when it is higher.
func nextOffset(raws []json.RawMessage, offset int64) int64 {
	for _, raw := range raws {
		var idOnly struct {
			ID int64 `json:"update_id"`
		}
		if json.Unmarshal(raw, &idOnly) == nil && idOnly.ID >= offset {
			offset = idOnly.ID + 1
		}
	}
	return offset
}

// take journals the messages of a batch that start turns, then dispatches
// every update, and reports whether it took the batch: false when the
// journal cannot be written (nothing was dispatched; the source must not
// acknowledge the batch). An empty batch is taken at once.
func (h *Host) take(ctx context.Context, raws []json.RawMessage) bool {
	type decoded struct {
		raw json.RawMessage
		upd *models.Update
		in  *inbound
	}
	if len(raws) == 0 {
		return true
	}
	batch := make([]decoded, 0, len(raws))
	var entries []ledger.Entry
	var top int64 // the highest update of the batch journaled pending
	now := time.Now().Unix()
	inBatch := map[int64]bool{}
	for _, raw := range raws {
		var u models.Update
		if err := json.Unmarshal(raw, &u); err != nil {
			h.logger.Warn("an update does not parse; skipped", "err", err)
			continue
		}
		if inBatch[u.ID] {
			// Delivered twice in one answer: the copy does not run again.
			h.logger.Info("skipped an update delivered twice", "update_id", u.ID)
			continue
		}
		inBatch[u.ID] = true
		if h.journal.Seen(u.ID) {
			// Journaled before a restart that came before its
			// acknowledgement: it was reported as interrupted (or has
			// run), so it does not run again.
			h.logger.Info("skipped an update that was journaled before the restart", "update_id", u.ID)
			continue
		}
		d := decoded{raw: raw, upd: &u}
		if d.in = h.classifyUpdate(&u); d.in != nil && d.in.startsTurn {
			entries = append(entries, ledger.Entry{Origin: ledger.Update(u.ID), State: ledger.Queued, Scope: d.in.target.String(), Update: raw, At: now})
			top = u.ID
		} else if h.journalEvery && !handled(d.in, d.upd) {
			// Only the journal knows that an update was taken (a
			// stranger's, one not for the bot), and its delivery again is
			// skipped.
			entries = append(entries, ledger.Entry{Origin: ledger.Update(u.ID), State: ledger.Dropped, At: now})
		}
		batch = append(batch, d)
	}
	// A command, a button press, a message the bot cannot read: journaled
	// as received, with its update, and done once handled and its replies
	// went out, so that a kill in between (which may come after the next
	// getUpdates confirmed the batch) leaves it to be handled after the
	// restart (see replayReceived).
	var received []decoded
	for _, d := range batch {
		if handled(d.in, d.upd) {
			entries = append(entries, ledger.Entry{Origin: ledger.Update(d.upd.ID), State: ledger.Received, Update: d.raw, At: now})
			received = append(received, d)
			if d.in != nil {
				d.in.replies = &replyCount{}
			}
		}
	}
	if err := h.journal.Write(entries...); err != nil {
		// Logged once per episode; the source does not acknowledge the
		// batch, so Telegram delivers it again. A polled batch of
		// commands alone is handled unjournaled instead: commands work on
		// a full disk (a crash may lose one then).
		h.journaled(err)
		if h.journalEvery || top != 0 {
			return false
		}
		for _, d := range received {
			if d.in != nil {
				d.in.replies = nil
			}
		}
		received = nil
	} else if len(entries) > 0 {
		h.journaled(nil)
	}
	for _, d := range batch {
		if d.in != nil {
			h.dispatch(ctx, d.in)
		} else if d.upd.CallbackQuery != nil {
			h.handleCallback(d.upd.CallbackQuery)
		}
	}
	for _, d := range received {
		h.handledDone(d.in, d.upd.ID)
	}
	return true
}

// handledDone marks a received update done once its handler returned and
// its replies went out (see commander.reply): a kill, a shutdown or a
// refusal for good before leaves it received, to be handled after the
// restart.
func (h *Host) handledDone(in *inbound, id int64) {
	o := ledger.Update(id)
	switch {
	case in == nil:
		h.journalDone(o)
	case in.deferred:
	case in.replies != nil:
		in.replies.close(func() { h.journalDone(o) })
	}
}

// replayReceived handles the updates found received at start-up: the bot
// died after it took them, before they were handled or their replies went
// out, and Telegram may never deliver them again. Each is then done as
// when first taken.
func (h *Host) replayReceived(ctx context.Context) {
	for _, e := range h.journal.Replay() {
		var u models.Update
		if err := json.Unmarshal(e.Update, &u); err != nil {
			h.journalDone(e.Origin)
			continue
		}
		in := h.classifyUpdate(&u)
		if !handled(in, &u) {
			h.journalDone(e.Origin)
			continue
		}
		if in != nil {
			in.replies = &replyCount{}
		}
		h.logger.Info("handling an update a restart cut before it was handled", "update_id", e.Origin.UpdateID())
		if in != nil {
			h.dispatch(ctx, in)
		} else {
			h.handleCallback(u.CallbackQuery)
		}
		h.handledDone(in, e.Origin.UpdateID())
	}
}

// handled reports whether take hands the update to a handler that starts
// no turn: a command, a message the bot cannot read, a button press.
func handled(in *inbound, u *models.Update) bool {
	return in != nil && !in.startsTurn || in == nil && u.CallbackQuery != nil
}

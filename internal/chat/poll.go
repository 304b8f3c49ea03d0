package chat

import (
	"context"
	"encoding/json"
	"time"

	"github.com/volcanic/telegram-agent/internal/backoff"
	"github.com/volcanic/telegram-agent/internal/chat/botapi"
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
	if p.deleteWebhook(ctx) {
		p.poll(ctx, take)
	}
	return nil
}

// deleteWebhook calls deleteWebhook until it succeeds, and reports
// whether it did before ctx ended: polling never starts while a webhook
// may still be set.
func (p pollSource) deleteWebhook(ctx context.Context) bool {
	h := p.h
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
func (p pollSource) poll(ctx context.Context, take func(context.Context, []json.RawMessage) bool) {
	h := p.h
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
		if offset, taken = p.received(ctx, take, raws, offset); taken {
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
func (p pollSource) received(ctx context.Context, take func(context.Context, []json.RawMessage) bool, raws []json.RawMessage, offset int64) (int64, bool) {
	if !take(ctx, raws) {
		return offset, false
	}
	p.h.touchHeartbeat()
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

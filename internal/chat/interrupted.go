package chat

import (
	"context"
	"encoding/json"
	"time"

	"github.com/go-telegram/bot/models"
)

// reportInterrupted tells each chat about every message a crash or restart
// cut short, each on its own (in reply to it), so nothing is lost silently:
// one crash can cut a running message and the ones queued behind it. The
// notices go out while polling starts. A message counts as reported in the
// journal only once its notice was sent: one that Telegram does not take
// (after a few tries) or that a crash cuts off is reported again after the
// next start-up.
func (h *Host) reportInterrupted() {
	for _, e := range h.journal.reported() {
		t, err := parseTarget(e.Scope)
		if err != nil {
			continue
		}
		h.logger.Info("reporting a message interrupted by a restart", "scope", e.Scope, "update_id", e.ID)
		h.report(t, "⚠️ This message was interrupted by a restart; send it again, or say /retry to run every interrupted message again.", entryMessageID(e), func() error {
			return h.journal.markReported(e.Scope, e.ID)
		})
	}
	for _, e := range h.journal.cutShort() {
		t, err := parseTarget(e.Scope)
		if err != nil {
			continue
		}
		h.logger.Info("reporting an answer a restart may have cut short", "scope", e.Scope, "update_id", e.ID)
		h.report(t, "⚠️ A restart came while the answer to this message was being sent; if it did not arrive whole, send the message again.", entryMessageID(e), func() error {
			return h.journal.markCutReported(e.ID)
		})
	}
}

// reportTries is how often a report is sent before it is left for the
// next start-up; reportPause is the pause between two tries.
const (
	reportTries = 3
	reportPause = 3 * time.Second
)

// report sends a report notice to t in reply to replyTo, tried a few times,
// and calls sent once it went out.
func (h *Host) report(t target, text string, replyTo int, sent func() error) {
	h.post(t, func(ctx context.Context) {
		for try := range reportTries {
			if try > 0 && !sleep(ctx, reportPause) {
				return
			}
			if h.sendNotice(ctx, t, text, replyTo) {
				if err := sent(); err != nil {
					h.logger.Warn("journal", "err", err)
				}
				return
			}
		}
		h.logger.Warn("a report could not be sent; it is sent again after the next start-up", "scope", t.String())
	})
}

// entryMessageID returns the id of the chat message e's update carries (0
// when it cannot be read), for a notice to reply to.
func entryMessageID(e journalEntry) int {
	var u models.Update
	if json.Unmarshal(e.Update, &u) != nil {
		return 0
	}
	switch {
	case u.Message != nil:
		return u.Message.ID
	case u.EditedMessage != nil:
		return u.EditedMessage.ID
	}
	return 0
}

package chat

import (
	"encoding/json"

	"github.com/go-telegram/bot/models"
)

// reportInterrupted tells each chat about every message a crash or restart
// cut short, each on its own (in reply to it), so nothing is lost silently:
// one crash can cut a running message and the ones queued behind it. The
// notices go out while polling starts.
func (h *Host) reportInterrupted() {
	for _, e := range h.journal.reported() {
		t, err := parseTarget(e.Scope)
		if err != nil {
			continue
		}
		h.logger.Info("reporting a message interrupted by a restart", "scope", e.Scope, "update_id", e.ID)
		h.notice(t, "⚠️ This message was interrupted by a restart; send it again, or say /retry to run every interrupted message again.", entryMessageID(e))
	}
	for _, e := range h.journal.cutShort() {
		t, err := parseTarget(e.Scope)
		if err != nil {
			continue
		}
		h.logger.Info("reporting an answer a restart may have cut short", "scope", e.Scope, "update_id", e.ID)
		h.notice(t, "⚠️ A restart came while the answer to this message was being sent; if it did not arrive whole, send the message again.", entryMessageID(e))
	}
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

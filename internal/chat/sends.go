package chat

import (
	"context"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/chat/turnview"
)

// StatusFile in the agent dir lists the tool status messages open now, for
// the next start-up to edit the ones a crash cut (see turnview.StatusFile).
const StatusFile = turnview.StatusFile

// Notify sends text to target as it is (redacted, split when long), outside
// any turn.
func (h *Host) Notify(ctx context.Context, scope, text string) error {
	t, err := parseTarget(scope)
	if err != nil {
		return err
	}
	return h.out.sendText(ctx, t, text, 0)
}

// Refused reports whether err, from Notify, is a refusal for good
// (botapi.Refused): a target that is no chat, a blocked bot, a chat gone.
func (h *Host) Refused(err error) bool { return botapi.Refused(err) }

// counted returns n with the noun in its singular or plural form.
func counted(n int, one, many string) string { return turnview.Counted(n, one, many) }

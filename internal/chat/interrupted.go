package chat

import (
	"context"
	"log/slog"
	"time"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
	"github.com/volcanic/telegram-agent/internal/chat/turnview"
)

// reportInterrupted tells each chat about every message a crash or restart
// cut short, each on its own (in reply to it), so nothing is lost silently:
// one crash can cut a running message and the ones queued behind it. The
// notices go out while polling starts. A message counts as reported in the
// journal only once its notice was sent (see ledger.Reporter): one that a crash
// cuts off, or that Telegram refuses for good, is reported again after the
// next start-up. What the journal writes is recorded in storage.
func reportInterrupted(journal *ledger.Journal, out outlet, storage *storageHealth, logger *slog.Logger) {
	for _, e := range journal.ToReport() {
		t, err := parseTarget(e.Scope)
		if err != nil {
			continue
		}
		text := "⚠️ This message was interrupted by a restart; send it again, or say /retry to run every interrupted message again."
		if e.Origin.IsPrompt() {
			logger.Info("reporting a scheduled prompt interrupted by a restart", "scope", e.Scope, "label", e.Label)
			text = interruptedPromptText(e.Label)
		} else {
			logger.Info("reporting a message interrupted by a restart", "scope", e.Scope, "update_id", e.Origin.UpdateID())
		}
		// Not needed any more once /retry took the message: it runs, and a
		// report after its answer would say it was lost.
		needed := func() bool { return journal.Unreported(e.Scope, e.Origin) }
		out.report(t, text, entryMessageID(e), needed, func() {
			storage.journaled(journal.MarkReported(e.Scope, e.Origin))
		})
	}
	for _, e := range journal.CutShort() {
		t, err := parseTarget(e.Scope)
		if err != nil {
			continue
		}
		text := "⚠️ A restart came while the answer to this message was being sent; if it did not arrive whole, send the message again."
		if e.Origin.IsPrompt() {
			logger.Info("reporting a scheduled prompt's answer a restart may have cut short", "scope", e.Scope, "label", e.Label)
			text = "⚠️ A restart came while the answer of the scheduled job “" + e.Label + "” was being sent; it may not have arrived whole."
		} else {
			logger.Info("reporting an answer a restart may have cut short", "scope", e.Scope, "update_id", e.Origin.UpdateID())
		}
		out.report(t, text, entryMessageID(e), nil, func() {
			storage.journaled(journal.MarkCutReported(e.Origin))
		})
	}
}

// interruptedPromptText is the report of the scheduled prompt label that a
// crash or a restart interrupted: it has no message to reply to.
func interruptedPromptText(label string) string {
	return "⚠️ The scheduled job “" + label + "” was interrupted by a restart; say /retry to run it again."
}

// newReporter returns the host's reporter: its tries pause from pause
// while the turns may run (life), and end with view's notices.
func newReporter(view *turnview.View, pause time.Duration, life context.Context, logger *slog.Logger) *ledger.Reporter {
	return &ledger.Reporter{Passing: passing, Pause: pause, Life: life, Ended: view.NoticesEnded, Go: view.Go, Logger: logger}
}

// passing reports whether a send that failed with err may succeed later:
// a 5xx, a 429, no answer.
func passing(err error) bool {
	c := botapi.ClassOf(err)
	return c == botapi.Transient || c == botapi.RateLimited
}

// reportOutlet is chat t as a report reaches it: its notices, which take
// a report beyond their bound, each try sent by its Noticer.
type reportOutlet struct {
	o turnview.Outlet
	t target
}

func (o reportOutlet) Post(try func(context.Context, ledger.Send)) {
	o.o.MustNotice(func(ctx context.Context, n turnview.Noticer) { try(ctx, n.Say) })
}

func (o reportOutlet) String() string { return o.t.String() }

// entryMessageID returns the id of the chat message e's update carries (0
// when it cannot be read, or e is a scheduled prompt's), for a notice to
// reply to.
func entryMessageID(e ledger.Entry) int {
	if e.Update == nil {
		return 0
	}
	u, err := botapi.DecodeUpdate(e.Update)
	if err != nil {
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

package chat

import (
	"context"
	"strings"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// sendEdit delivers an edit of m with its new text.
func (h *harness) sendEdit(m models.Message, text string) {
	h.t.Helper()
	m.Text = text
	m.EditDate = m.Date + 1
	h.tg.Enqueue(models.Update{EditedMessage: &m})
}

// An edit of a message still queued replaces it; an edit of one already
// answered runs as a new message, marked as an edit; an edited command
// does not run again.
func TestEditedMessages(t *testing.T) {
	release := make(chan struct{})
	var seen []string
	faux := agenttest.NewFauxProvider()
	faux.Handle(func(ctx context.Context, req agent.Request, _ func(string)) (agent.Response, error) {
		text := lastUserText(req)
		if text == "hold on" {
			select {
			case <-release:
			case <-ctx.Done():
			}
		}
		return agent.Response{Text: "answer to: " + text}, nil
	})
	h := newHarness(t, harnessConfig{provider: faux})
	h.tg.SendText(userID, userID, "hold on")
	waitFor(t, "the first turn", func() bool { return len(faux.Requests()) == 1 })
	queued := h.tg.SendText(userID, userID, "what is 2+2")
	h.waitText(userID, "⏳ Queued")
	h.sendEdit(queued, "what is 3+3")
	h.waitText(userID, "✏️ Updated the queued message.")
	close(release)
	h.waitText(userID, "answer to: what is 3+3")

	// An edit of an answered message is a new turn, marked as an edit.
	h.sendEdit(queued, "what is 4+4")
	h.waitText(userID, "answer to: "+editedNote)
	// An edited command runs nothing.
	status := h.tg.SendText(userID, userID, "/status")
	h.waitText(userID, "Model: test-model")
	h.sendEdit(status, "/new")
	h.tg.SendText(userID, userID, "last")
	h.waitText(userID, "answer to: last")

	for _, r := range faux.Requests() {
		seen = append(seen, lastUserText(r))
	}
	want := []string{"hold on", "what is 3+3", editedNote + "\n\nwhat is 4+4", "last"}
	if diff := cmp.Diff(want, seen); diff != "" {
		t.Errorf("what the model was asked (-want +got):\n%s", diff)
	}
	for _, m := range h.tg.Messages(userID) {
		if strings.Contains(m.Visible, "New session started") {
			t.Error("an edited /status ran as /new")
		}
	}
	// Nothing stays pending in the journal: the replaced message's entry
	// was done with its edit.
	waitFor(t, "the journal to settle", func() bool {
		return h.host.journal.Unfinished() == 0
	})
}

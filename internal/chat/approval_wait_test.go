package chat

import (
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// userTexts returns the texts of the user messages the model was sent, in
// the order they first appeared.
func userTexts(faux *agenttest.FauxProvider) []string {
	var out []string
	for _, req := range faux.Requests() {
		for _, m := range req.Messages {
			if m.Role != agent.RoleUser {
				continue
			}
			if text := agent.TextOf(m.Content); !slices.Contains(out, text) {
				out = append(out, text)
			}
		}
	}
	return out
}

// TestMessagesWhileAnApprovalWaits checks that a message sent while an
// approval request waits gets a hint and never reaches the model, and that
// /approve and /deny answer the request as its buttons do.
func TestMessagesWhileAnApprovalWaits(t *testing.T) {
	tests := []struct {
		answer      string
		wantRemoved bool
		wantOutcome string
	}{
		{"/approve", true, "✅ Allowed once."},
		{"/deny", false, "🚫 Denied."},
	}
	for _, tt := range tests {
		t.Run(strings.TrimPrefix(tt.answer, "/"), func(t *testing.T) {
			faux := agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("bash", rmVictim)), agenttest.FauxText("finished"))
			h := approvalHarness(t, harnessConfig{provider: faux})
			dir := h.victim()
			h.tg.SendText(userID, userID, "clean up")
			req := h.waitText(userID, "Approval needed")

			before := h.lastID()
			h.tg.SendText(userID, userID, "yes")
			hint := h.waitNewText(before, "An approval request is waiting")
			if !strings.Contains(hint.Visible, "/approve") || !strings.Contains(hint.Visible, "/deny") {
				t.Errorf("the hint %q does not name /approve and /deny", hint.Visible)
			}
			if !exists(dir) {
				t.Fatal("the command ran on a typed message")
			}

			before = h.lastID()
			h.tg.SendText(userID, userID, tt.answer)
			h.waitNewText(before, tt.wantOutcome)
			h.waitText(userID, "finished")
			h.waitEdited(req.ID, tt.wantOutcome)
			if exists(dir) == tt.wantRemoved {
				t.Errorf("after %s the folder exists: %v", tt.answer, exists(dir))
			}

			// The next message is the next turn: "yes" never was one.
			faux.Enqueue(agenttest.FauxText("next done"))
			before = h.lastID()
			h.tg.SendText(userID, userID, "next")
			h.waitNewText(before, "next done")
			if diff := cmp.Diff([]string{"clean up", "next"}, userTexts(faux)); diff != "" {
				t.Errorf("the user messages the model saw (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApproveWithNothingWaiting checks that /approve and /deny say so when
// no request waits.
func TestApproveWithNothingWaiting(t *testing.T) {
	h := approvalHarness(t, harnessConfig{provider: agenttest.NewFauxProvider()})
	for _, cmd := range []string{"/approve", "/deny"} {
		before := h.lastID()
		h.tg.SendText(userID, userID, cmd)
		h.waitNewText(before, "No approval request is waiting in this chat.")
	}
}

// TestApprovalComesBelowItsStatus checks that the approval request comes
// after the status line of the call it asks about, even when Telegram
// refuses the status's first send with a 429 (a preview's one try would
// then leave the status to come after the request).
func TestApprovalComesBelowItsStatus(t *testing.T) {
	faux := agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("bash", rmVictim)), agenttest.FauxText("finished"))
	h := approvalHarness(t, harnessConfig{provider: faux})
	h.victim()
	h.tg.FailNext("sendMessage", 1, 429, "Too Many Requests: retry after 1", 1)
	h.tg.SendText(userID, userID, "clean up")
	req := h.waitText(userID, "Approval needed")
	status := h.waitText(userID, "bash: rm -rf victim")
	if status.ID > req.ID {
		t.Errorf("the status line (message %d) came after the approval request (message %d)", status.ID, req.ID)
	}
	h.press(req, "deny")
	h.waitText(userID, "finished")
}

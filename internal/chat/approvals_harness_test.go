package chat

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/approvals"
	"github.com/volcanic/telegram-agent/internal/sandbox"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// approvalHarness is a harness whose agent has the approvals extension and
// send_file, both reaching the host through each turn's front end;
// send_file is confined to a sandbox view of the workspace, as in the bot.
func approvalHarness(t *testing.T, cfg harnessConfig, opts ...approvals.Option) *harness {
	t.Helper()
	if cfg.workspace == "" {
		cfg.workspace = t.TempDir()
	}
	view := &sandbox.View{Workspace: cfg.workspace, Temp: t.TempDir(), System: []string{"/usr", "/etc"}}
	cfg.agentOpts = append(cfg.agentOpts, agent.WithExtensions(approvals.New(opts...)), agent.WithTools(tools.NewSendFile(tools.WithView(view))))
	return newHarness(t, cfg)
}

// rmVictim is the model's risky call, and the folder it would remove.
const rmVictim = `{"command":"rm -rf victim"}`

// victim makes the folder rm -rf victim removes.
func (h *harness) victim() string {
	h.t.Helper()
	dir := filepath.Join(h.workspace, "victim")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		h.t.Fatal(err)
	}
	return dir
}

// callbacks returns the callback data of m's buttons, in order.
func callbacks(t *testing.T, m telegramtest.Message) []string {
	t.Helper()
	var out []string
	for _, b := range inlineButtons(t, m) {
		out = append(out, b.CallbackData)
	}
	return out
}

// press presses the button of the approval request m whose choice is
// once, always or deny.
func (h *harness) press(m telegramtest.Message, choice string) {
	h.t.Helper()
	for _, data := range callbacks(h.t, m) {
		if strings.HasSuffix(data, ":"+choice) {
			h.tg.SendCallback(userID, userID, m.ID, data)
			return
		}
	}
	h.t.Fatalf("the approval request has no %q button: %s", choice, m.ReplyMarkup)
}

// lastID returns the id of the bot's latest message in the user's chat.
func (h *harness) lastID() int {
	id := 0
	for _, m := range h.tg.Messages(userID) {
		id = max(id, m.ID)
	}
	return id
}

// waitNewText waits for a bot message after the message after whose
// visible text contains s.
func (h *harness) waitNewText(after int, s string) telegramtest.Message {
	h.t.Helper()
	var found telegramtest.Message
	h.waitMessages(userID, s, func(msgs []telegramtest.Message) bool {
		for _, m := range msgs {
			if m.ID > after && strings.Contains(m.Visible, s) {
				found = m
				return true
			}
		}
		return false
	})
	return found
}

// waitEdited waits until the message id reads want, without buttons.
func (h *harness) waitEdited(id int, want string) {
	h.t.Helper()
	h.waitMessages(userID, "message "+want, func(msgs []telegramtest.Message) bool {
		for _, m := range msgs {
			if m.ID == id {
				return strings.Contains(m.Visible, want) && !strings.Contains(m.ReplyMarkup, callbackApproval)
			}
		}
		return false
	})
}

// lastToolResult returns the last tool result the model was sent.
func lastToolResult(t *testing.T, faux *agenttest.FauxProvider) string {
	t.Helper()
	reqs := faux.Requests()
	for i := len(reqs) - 1; i >= 0; i-- {
		msgs := reqs[i].Messages
		for j := len(msgs) - 1; j >= 0; j-- {
			if msgs[j].Role == agent.RoleTool {
				return agent.TextOf(msgs[j].Content)
			}
		}
	}
	t.Fatal("the model was sent no tool result")
	return ""
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

package chat

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/prompt"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// lastModel returns the model the provider's latest request named.
func lastModel(faux *agenttest.FauxProvider) string {
	reqs := faux.Requests()
	if len(reqs) == 0 {
		return ""
	}
	return reqs[len(reqs)-1].Model
}

// /model lists, refuses a name not in the list, switches the chat (the next
// request uses the new model), and the choice survives /new and a restart.
func TestModelCommand(t *testing.T) {
	models := []string{"test-model", "big-model", "small-model"}
	faux := agenttest.NewFauxProvider()
	echoHandler(faux, func(s string) string { return "echo: " + s })
	tg := telegramtest.New(t)
	agentDir, ws := t.TempDir(), t.TempDir()
	h := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: agentDir, workspace: ws, models: models})

	h.tg.SendText(userID, userID, "/model")
	menu := h.waitText(userID, "Tap a model")
	if !strings.Contains(menu.Visible, "Model: test-model") {
		t.Errorf("/model does not name the chat's model: %q", menu.Visible)
	}
	if diff := cmp.Diff([]string{"✅ test-model", "big-model", "small-model"}, buttonTexts(t, menu)); diff != "" {
		t.Errorf("/model's buttons (-want +got):\n%s", diff)
	}
	h.tg.SendText(userID, userID, "/model gpt-unknown")
	refused := h.waitText(userID, "is not one of the models")
	if !strings.Contains(refused.Visible, "small-model") {
		t.Errorf("the refusal does not list the models: %q", refused.Visible)
	}
	// ask sends text and checks the model its request named.
	ask := func(h *harness, text, want string) {
		t.Helper()
		h.tg.SendText(userID, userID, text)
		h.waitText(userID, "echo: "+text)
		if got := lastModel(faux); got != want {
			t.Errorf("%q: the request named %q, want %q", text, got, want)
		}
	}
	ask(h, "before the switch", "test-model")
	h.tg.SendText(userID, userID, "/model Small-Model")
	h.waitText(userID, "This chat now uses small-model")
	ask(h, "after the switch", "small-model")
	// The button switches too, and the menu shows the new choice.
	h.tg.SendCallback(userID, userID, menu.ID, buttonData(t, menu, "big-model"))
	waitFor(t, "the switch's toast", func() bool {
		for _, r := range h.tg.RequestsFor("answerCallbackQuery") {
			if strings.Contains(r.Params["text"], "This chat now uses big-model") {
				return true
			}
		}
		return false
	})
	h.waitMessages(userID, "the menu edited", func(msgs []telegramtest.Message) bool {
		for _, m := range msgs {
			if m.ID == menu.ID {
				return slices.Contains(buttonTexts(t, m), "✅ big-model")
			}
		}
		return false
	})
	ask(h, "after the button", "big-model")
	h.tg.SendText(userID, userID, "/new")
	h.waitText(userID, "New session started")
	ask(h, "in a new session", "big-model")
	h.stop()

	h2 := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: agentDir, workspace: ws, models: models})
	ask(h2, "after the restart", "big-model")
	h2.tg.SendText(userID, userID, "/status")
	h2.waitText(userID, "Model: big-model")
}

// buttonTexts returns the texts of m's inline buttons, in order.
func buttonTexts(t *testing.T, m telegramtest.Message) []string {
	t.Helper()
	var out []string
	for _, b := range inlineButtons(t, m) {
		out = append(out, b.Text)
	}
	return out
}

// buttonData returns the callback data of m's button whose text ends in
// text.
func buttonData(t *testing.T, m telegramtest.Message, text string) string {
	t.Helper()
	for _, b := range inlineButtons(t, m) {
		if strings.HasSuffix(b.Text, text) {
			return b.CallbackData
		}
	}
	t.Fatalf("message %d has no button %q: %s", m.ID, text, m.ReplyMarkup)
	return ""
}

type inlineButton struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data"`
}

func inlineButtons(t *testing.T, m telegramtest.Message) []inlineButton {
	t.Helper()
	var markup struct {
		InlineKeyboard [][]inlineButton `json:"inline_keyboard"`
	}
	if m.ReplyMarkup == "" {
		return nil
	}
	if err := json.Unmarshal([]byte(m.ReplyMarkup), &markup); err != nil {
		t.Fatalf("reply markup %s: %v", m.ReplyMarkup, err)
	}
	var out []inlineButton
	for _, row := range markup.InlineKeyboard {
		out = append(out, row...)
	}
	return out
}

func TestModelCommandWithoutModels(t *testing.T) {
	h := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider()})
	for _, cmd := range []string{"/model", "/model big-model"} {
		t.Run(cmd, func(t *testing.T) {
			before := len(h.tg.Messages(userID))
			h.tg.SendText(userID, userID, cmd)
			msgs := h.waitMessages(userID, "the answer to "+cmd, func(m []telegramtest.Message) bool { return len(m) > before })
			got := msgs[len(msgs)-1].Visible
			if !strings.Contains(got, "Model: test-model") || !strings.Contains(got, "Switching models is not configured") {
				t.Errorf("%s answered %q", cmd, got)
			}
		})
	}
}

// The system prompt of a turn, built by internal/prompt, holds the chat's
// zone and the operator's SYSTEM.md and AGENTS.md but no clock; the time
// goes with the message, in the chat's zone.
func TestSystemPromptHasChatZoneAndOperatorFiles(t *testing.T) {
	agentDir, ws := t.TempDir(), t.TempDir()
	files := map[string]string{
		filepath.Join(agentDir, prompt.SystemFile): "Operator rule: always answer in haiku.",
		filepath.Join(ws, prompt.AgentsFile):       "Workspace rule: the project is about tomatoes.",
	}
	for path, text := range files {
		if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	faux := agenttest.NewFauxProvider()
	echoHandler(faux, func(s string) string { return "echo: " + s })
	pb := prompt.NewBuilder(agentDir, ws, nil)
	h := newHarness(t, harnessConfig{provider: faux, agentDir: agentDir, workspace: ws,
		agentOpts: []agent.Option{agent.WithSystemPrompt(pb.Prompt), agent.WithMessageTimes()}})
	h.tg.SendText(userID, userID, "/tz Asia/Tokyo")
	h.waitText(userID, "Time zone set")
	tokyo, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	before := agent.TimeStamp(time.Now().In(tokyo), "Asia/Tokyo")
	h.tg.SendText(userID, userID, "what time is it?")
	h.waitText(userID, "what time is it?")
	after := agent.TimeStamp(time.Now().In(tokyo), "Asia/Tokyo")
	req := faux.Requests()[0]
	if got := lastUserText(req); got != before+"\nwhat time is it?" && got != after+"\nwhat time is it?" {
		t.Errorf("the user message is %q, want it stamped %s", got, before)
	}
	system := req.System
	if strings.Contains(system, time.Now().In(tokyo).Format("15:04")) && strings.Contains(system, time.Now().In(tokyo).Format("January")) {
		t.Errorf("the system prompt holds the time:\n%s", system)
	}
	for _, want := range append([]string{"This chat's time zone is Asia/Tokyo."}, files[filepath.Join(agentDir, prompt.SystemFile)], files[filepath.Join(ws, prompt.AgentsFile)]) {
		if !strings.Contains(system, want) {
			t.Errorf("the system prompt does not hold %q", want)
		}
	}
}

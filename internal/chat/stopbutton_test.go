package chat

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// stopData returns the callback data of the Stop button in a reply_markup
// (JSON), or "" when it has none.
func stopData(t *testing.T, markup string) string {
	t.Helper()
	if markup == "" {
		return ""
	}
	var kb struct {
		InlineKeyboard [][]struct {
			CallbackData string `json:"callback_data"`
		} `json:"inline_keyboard"`
	}
	if err := json.Unmarshal([]byte(markup), &kb); err != nil {
		t.Fatalf("reply_markup %s: %v", markup, err)
	}
	for _, row := range kb.InlineKeyboard {
		for _, b := range row {
			if b.CallbackData == callbackStop || strings.HasPrefix(b.CallbackData, callbackStop+":") {
				return b.CallbackData
			}
		}
	}
	return ""
}

// waitStatus waits for the status message whose visible text contains s
// and that has a Stop button, and returns it with the button's data.
func (h *harness) waitStatus(chatID int64, s string) (telegramtest.Message, string) {
	h.t.Helper()
	var found telegramtest.Message
	var data string
	h.waitMessages(chatID, "a status with a Stop button showing "+s, func(msgs []telegramtest.Message) bool {
		for _, m := range msgs {
			if strings.Contains(m.Visible, s) {
				found, data = m, stopData(h.t, m.ReplyMarkup)
				return data != ""
			}
		}
		return false
	})
	return found, data
}

// waitCallbackAnswer waits for the answer to the callback query id and
// returns its text.
func (h *harness) waitCallbackAnswer(id string) string {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	r, err := h.tg.WaitFor(ctx, func(r telegramtest.Request) bool {
		return r.Method == "answerCallbackQuery" && r.Params["callback_query_id"] == id
	})
	if err != nil {
		h.t.Fatalf("waiting for the answer to callback %s: %v", id, err)
	}
	return r.Params["text"]
}

// A Stop button names its turn: pressed after that turn ended (or a button
// from before turns had ids), it says so and stops nothing, not even the
// turn running now; the running turn's own button stops it.
func TestStaleStopButtonStopsNothing(t *testing.T) {
	faux := agenttest.NewFauxProvider(
		agenttest.FauxToolCalls(agenttest.FauxCall("bash", `{"command":"echo first; sleep 1000"}`)),
	)
	h := newHarness(t, harnessConfig{provider: faux})
	h.tg.SendText(userID, userID, "first")
	first, firstData := h.waitStatus(userID, "bash: echo first")
	h.tg.SendText(userID, userID, "/stop")
	h.waitText(userID, "Stopped the running turn")

	faux.Enqueue(agenttest.FauxToolCalls(agenttest.FauxCall("bash", `{"command":"echo second; sleep 1000"}`)))
	h.tg.SendText(userID, userID, "second")
	second, secondData := h.waitStatus(userID, "bash: echo second")
	if firstData == secondData {
		t.Fatalf("two turns' Stop buttons carry the same data %q", firstData)
	}
	w := h.host.existingWorker(target{chatID: userID})
	for _, data := range []string{firstData, callbackStop, callbackStop + ":"} {
		id := h.tg.SendCallback(userID, userID, first.ID, data)
		if diff := cmp.Diff("That turn already ended.", h.waitCallbackAnswer(id)); diff != "" {
			t.Errorf("the answer to %q (-want +got):\n%s", data, diff)
		}
		// The callback was decided before it was answered.
		w.mu.Lock()
		stopped, running := w.stopped, w.running != nil
		w.mu.Unlock()
		if stopped || !running {
			t.Fatalf("a stale Stop button (%q) stopped the running turn", data)
		}
	}
	id := h.tg.SendCallback(userID, userID, second.ID, secondData)
	if diff := cmp.Diff("⏹ Stopped the running turn.", h.waitCallbackAnswer(id)); diff != "" {
		t.Errorf("the answer to the live button (-want +got):\n%s", diff)
	}
	h.waitText(userID, "⏹ Stopped.")
}

// The answer goes out before the status message's final edit, whose
// retries do not hold it up; when that edit fails for good, the Stop button
// is removed all the same, and nothing is logged at Error (the status is
// not a message the user must get).
func TestFailedFinalStatusEditLeavesNoStopButton(t *testing.T) {
	tg := telegramtest.New(t)
	faux := agenttest.NewFauxProvider(
		agenttest.FauxToolCalls(agenttest.FauxCall("bash", `{"command":"echo ok"}`)),
		agenttest.FauxFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
			// Once the status shows with its Stop button, Telegram
			// rate-limits every edit of a text.
			err := tg.WaitUntil(ctx, func() bool {
				for _, m := range tg.Messages(userID) {
					if strings.Contains(m.Visible, "bash: echo ok") && stopData(t, m.ReplyMarkup) != "" {
						return true
					}
				}
				return false
			})
			tg.FailNext("editMessageText", 1000, 429, "", 0)
			return agent.Response{Text: "the answer"}, err
		}),
	)
	rec := newLogRecorder()
	h := newHarness(t, harnessConfig{provider: faux, tg: tg, opts: []Option{WithLogger(rec.logger())}})
	h.tg.SendText(userID, userID, "run it")
	status, _ := h.waitStatus(userID, "bash: echo ok")
	h.waitText(userID, "the answer")
	h.waitMessages(userID, "the Stop button removed", func(msgs []telegramtest.Message) bool {
		for _, m := range msgs {
			if m.ID == status.ID {
				return stopData(t, m.ReplyMarkup) == ""
			}
		}
		return false
	})
	rec.wait(t, "saying the Stop button was removed", isLog(slog.LevelWarn, "its Stop button was removed"))

	// The answer's sendMessage came before any final edit of the status
	// (an edit without the Stop button).
	answerAt, finalAt := -1, -1
	for _, r := range h.tg.Requests() {
		switch {
		case r.Method == "sendMessage" && strings.Contains(r.Params["text"], "the answer") && answerAt < 0:
			answerAt = r.Seq
		case (r.Method == "editMessageText" || r.Method == "editMessageReplyMarkup") && r.Params["message_id"] == itoa64(int64(status.ID)) &&
			stopData(t, r.Params["reply_markup"]) == "" && finalAt < 0:
			finalAt = r.Seq
		}
	}
	if answerAt < 0 || finalAt < 0 || finalAt < answerAt {
		t.Errorf("the answer went out as request %d, the status's final edit as request %d: the answer must come first", answerAt, finalAt)
	}
	for _, r := range rec.find(func(r logRecord) bool { return r.Level >= slog.LevelError }) {
		t.Errorf("logged at Error: %s (what=%s)", r.Message, r.Attrs["what"])
	}
}

// A rate-limited update of a running tool's status is logged once at Warn
// with the retry_after, not at Error: the next update replaces it.
func TestRateLimitedStatusUpdateIsAWarning(t *testing.T) {
	faux := agenttest.NewFauxProvider(
		agenttest.FauxToolCalls(agenttest.FauxCall("bash", `{"command":"i=0; while [ ! -f go ]; do i=$((i+1)); echo tick $i; sleep 0.05; done; echo done"}`)),
		agenttest.FauxText("finished"),
	)
	rec := newLogRecorder()
	h := newHarness(t, harnessConfig{provider: faux, opts: []Option{WithLogger(rec.logger())}})
	h.tg.SendText(userID, userID, "tick")
	h.waitStatus(userID, "bash: i=0")
	h.tg.FailNext("editMessageText", 1, 429, "", 1)
	got := rec.wait(t, "about the failed status update", func(r logRecord) bool { return r.Attrs["what"] == "tool status" })
	if err := os.WriteFile(filepath.Join(h.workspace, "go"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	h.waitText(userID, "finished")
	if got.Level != slog.LevelWarn || got.Attrs["retry_after"] != "1s" {
		t.Errorf("the rate-limited status update was logged at %s with retry_after %q, want WARN with 1s", got.Level, got.Attrs["retry_after"])
	}
	if n := len(rec.find(func(r logRecord) bool { return r.Attrs["what"] == "tool status" })); n != 1 {
		t.Errorf("the rate-limited status update was logged %d times, want once", n)
	}
	for _, r := range rec.find(func(r logRecord) bool { return r.Level >= slog.LevelError }) {
		t.Errorf("logged at Error: %s (what=%s)", r.Message, r.Attrs["what"])
	}
}

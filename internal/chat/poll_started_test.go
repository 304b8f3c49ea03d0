package chat

import (
	"log/slog"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// "polling Telegram" is logged once Telegram has answered a getUpdates, and
// only once: while the first calls fail, the log says only that they
// failed, so the line means that polling works. Until then getUpdates does
// not wait, so the line comes at once with an idle bot.
func TestPollingLoggedAfterTheFirstAnswer(t *testing.T) {
	tg := telegramtest.New(t)
	tg.FailNext("getUpdates", 2, 502, "", 0)
	rec := newLogRecorder()
	h := newHarness(t, harnessConfig{provider: echoAnswers(), tg: tg, opts: []Option{WithLogger(rec.logger())}})
	got := rec.wait(t, "saying that polling works", isLog(slog.LevelInfo, "polling Telegram"))
	if diff := cmp.Diff(map[string]string{"allowed_users": "1", "model": "test-model"}, got.Attrs); diff != "" {
		t.Errorf("the line's attributes (-want +got):\n%s", diff)
	}
	h.tg.SendText(userID, userID, "hi")
	h.waitText(userID, "answer to hi")

	var order []string
	for _, r := range rec.records() {
		if r.Message == "getUpdates failed" || r.Message == "polling Telegram" {
			order = append(order, r.Message)
		}
	}
	if diff := cmp.Diff([]string{"getUpdates failed", "getUpdates failed", "polling Telegram"}, order); diff != "" {
		t.Errorf("the polling log lines in order (-want +got):\n%s", diff)
	}
	// The calls before the first answer do not wait (the line would come
	// a long poll late otherwise); then polling waits as configured.
	var timeouts []string
	for _, r := range tg.RequestsFor("getUpdates")[:4] {
		timeouts = append(timeouts, r.Params["timeout"])
	}
	if diff := cmp.Diff([]string{"0", "0", "0", "1"}, timeouts); diff != "" {
		t.Errorf("the first getUpdates timeouts (-want +got):\n%s", diff)
	}
}

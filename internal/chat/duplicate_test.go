package chat

import (
	"fmt"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// An update Telegram delivers twice in one batch runs once: the chaos
// suite's duplicated updates.
func TestDuplicatedUpdateInOneBatchRunsOnce(t *testing.T) {
	tg := telegramtest.New(t)
	raw := fmt.Sprintf(`{"update_id":50,"message":{"message_id":7,"date":%d,"chat":{"id":%d,"type":"private"},"from":{"id":%d},"text":"run me once"}}`,
		time.Now().Unix(), userID, userID)
	tg.EnqueueJSON(raw)
	tg.EnqueueJSON(raw)
	faux := agenttest.NewFauxProvider()
	faux.Handle(ranUserText)
	h := newHarness(t, harnessConfig{provider: faux, tg: tg})
	h.waitText(userID, "ran: run me once")
	tg.SendText(userID, userID, "/help")
	h.waitText(userID, "/retry")
	if n := len(faux.Requests()); n != 1 {
		t.Errorf("the duplicated update ran %d times, want once", n)
	}
}

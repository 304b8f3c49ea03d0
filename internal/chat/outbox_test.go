package chat

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// gatedSender holds every sendMessage whose text contains match until
// gate is closed (or the call's context ends), and says when one waits.
type gatedSender struct {
	Sender
	match   string
	gate    chan struct{}
	waiting chan struct{}
	once    sync.Once
}

func (g *gatedSender) SendMessage(ctx context.Context, p *bot.SendMessageParams) (*models.Message, error) {
	if strings.Contains(p.Text, g.match) {
		g.once.Do(func() { close(g.waiting) })
		select {
		case <-g.gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return g.Sender.SendMessage(ctx, p)
}

// Polling never waits on a Telegram send: while the "queued" notice hangs,
// a /stop is still fetched and stops the running turn.
func TestPollingDoesNotWaitOnNotices(t *testing.T) {
	tg := telegramtest.New(t)
	b, err := bot.New(tg.Token(), bot.WithServerURL(tg.URL()), bot.WithSkipGetMe())
	if err != nil {
		t.Fatal(err)
	}
	gated := &gatedSender{Sender: b, match: "Queued", gate: make(chan struct{}), waiting: make(chan struct{})}
	defer close(gated.gate)
	stopped := make(chan struct{})
	faux := agent.NewFauxProvider(agent.FauxFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		<-ctx.Done()
		close(stopped)
		return agent.Response{}, ctx.Err()
	}))
	h := newHarness(t, harnessConfig{provider: faux, tg: tg, opts: []Option{WithSender(gated)}})
	h.tg.SendText(userID, userID, "one")
	waitFor(t, "the first turn", func() bool { return len(faux.Requests()) == 1 })
	h.tg.SendText(userID, userID, "two")
	waitClosed(t, "the queued notice to be sent", gated.waiting)
	h.tg.SendText(userID, userID, "/stop")
	waitClosed(t, "/stop to stop the turn while the notice hangs", stopped)
}

// waitClosed waits for ch to be closed, with a generous hang guard.
func waitClosed(t *testing.T, what string, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(15 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

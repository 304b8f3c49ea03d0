package chat

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// gatedTransport holds every sendMessage whose body contains match until
// gate is closed (or the request's context ends), and says when one waits.
type gatedTransport struct {
	match   string
	gate    chan struct{}
	waiting chan struct{}
	once    sync.Once
}

// RoundTrip passes r on to the default transport, after the gate for a
// sendMessage that matches.
func (g *gatedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/sendMessage") && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if strings.Contains(string(body), g.match) {
			g.once.Do(func() { close(g.waiting) })
			select {
			case <-g.gate:
			case <-r.Context().Done():
				return nil, r.Context().Err()
			}
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// Polling never waits on a Telegram send: while the "queued" notice hangs,
// a /stop is still fetched and stops the running turn.
func TestPollingDoesNotWaitOnNotices(t *testing.T) {
	tg := telegramtest.New(t)
	gated := &gatedTransport{match: "Queued", gate: make(chan struct{}), waiting: make(chan struct{})}
	defer close(gated.gate)
	stopped := make(chan struct{})
	faux := agenttest.NewFauxProvider(agenttest.FauxFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		<-ctx.Done()
		close(stopped)
		return agent.Response{}, ctx.Err()
	}))
	h := newHarness(t, harnessConfig{provider: faux, tg: tg, opts: []Option{withHTTPClient(&http.Client{Transport: gated})}})
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

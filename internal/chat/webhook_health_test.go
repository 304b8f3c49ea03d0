package chat

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// The health check touches the heartbeat while the webhook works, and
// stops (saying why) when the webhook is no longer ours.
func TestWebhookHealth(t *testing.T) {
	tg := telegramtest.New(t)
	rec := newLogRecorder()
	w := testWebhook(t)
	h := webhookHarness(t, tg, w, harnessConfig{provider: echoAnswers(), opts: []Option{WithLogger(rec.logger())}},
		withWebhookTimings(time.Second, time.Second, 50*time.Millisecond))
	heartbeat := filepath.Join(h.agentDir, HeartbeatFile)
	waitFor(t, "the heartbeat", func() bool { _, err := statTime(heartbeat); return err == nil })
	waitFor(t, "a getWebhookInfo", func() bool { return len(tg.RequestsFor("getWebhookInfo")) > 0 })

	client, err := botapi.New(tg.Token(), redactor.New(nil), botapi.WithBaseURL(tg.URL()))
	if err != nil {
		t.Fatal(err)
	}
	if err := client.DeleteWebhook(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := rec.wait(t, "the warning", isLog(slog.LevelWarn, "the webhook is not healthy"))
	if !strings.Contains(got.Attrs["reason"], "TELEGRAM_WEBHOOK_URL") {
		t.Errorf("the reason %q does not name TELEGRAM_WEBHOOK_URL", got.Attrs["reason"])
	}
	before, _ := statTime(heartbeat)
	// Two more checks, which must not touch the heartbeat.
	n := len(tg.RequestsFor("getWebhookInfo"))
	waitFor(t, "two more checks", func() bool { return len(tg.RequestsFor("getWebhookInfo")) >= n+2 })
	if after, _ := statTime(heartbeat); !after.Equal(before) {
		t.Errorf("the heartbeat was touched while the webhook was not ours")
	}
	if err := client.SetWebhook(context.Background(), botapi.Webhook{URL: w.URL, SecretToken: testWebhookSecret}); err != nil {
		t.Fatal(err)
	}
	rec.wait(t, "the recovery", isLog(slog.LevelInfo, "the webhook is healthy again"))
	if n := len(tg.RequestsFor("getUpdates")); n != 0 {
		t.Errorf("%d getUpdates calls in webhook mode", n)
	}
}

// A webhook Telegram refuses stops Run with ErrWebhookRejected; an
// address that cannot be listened on stops it too.
func TestWebhookStartFailures(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	tests := []struct {
		name   string
		fail   bool
		listen string
		want   error
	}{
		{name: "refused", fail: true, want: ErrWebhookRejected},
		{name: "address in use", listen: taken.Addr().String()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := telegramtest.New(t)
			if tt.fail {
				tg.FailNext("setWebhook", 1, 400, "Bad Request: bad webhook: An HTTPS URL must be provided for webhook", 0)
			}
			w := testWebhook(t)
			if tt.listen != "" {
				w.Listen = tt.listen
			}
			h := newHarness(t, harnessConfig{provider: echoAnswers(), tg: tg, opts: []Option{WithWebhook(w)}})
			var runErr error
			select {
			case runErr = <-h.done:
			case <-time.After(15 * time.Second):
				t.Fatal("Run did not stop")
			}
			h.stopOnce.Do(func() { h.cancel(); h.agent.Close() })
			if runErr == nil || (tt.want != nil && !errors.Is(runErr, tt.want)) {
				t.Errorf("Run: %v, want an error wrapping %v", runErr, tt.want)
			}
			if n := len(tg.RequestsFor("getUpdates")); n != 0 {
				t.Errorf("%d getUpdates calls in webhook mode", n)
			}
		})
	}
}

// statTime returns the modification time of path.
func statTime(path string) (time.Time, error) {
	info, err := os.Stat(path)
	if err != nil {
		return time.Time{}, err
	}
	return info.ModTime(), nil
}

package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// The doctor shows getWebhookInfo: in webhook mode whether the webhook is
// ours, the updates waiting and the last delivery error; in polling mode a
// webhook left set. It never shows the secret or the URL's path.
func TestDoctorWebhook(t *testing.T) {
	const secret = "doctor-webhook-secret_0014"
	// A URL where nothing listens, so that Telegram's deliveries fail.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	deadURL := "http://" + ln.Addr().String() + "/hard-to-guess-path"
	ln.Close()
	tests := []struct {
		name        string
		configured  string
		set         string
		pending     bool
		wantLine    []string
		wantWarning string
	}{
		{name: "polling, no webhook", wantLine: []string{"updates: long polling"}},
		{name: "polling, a webhook left set", set: deadURL, wantWarning: "the bot deletes it before it polls"},
		{name: "webhook, not set yet", configured: deadURL, wantLine: []string{"updates: webhook at http://127.0.0.1"}, wantWarning: "none is set yet"},
		{name: "webhook, another URL", configured: deadURL, set: "https://other.example.com/x", wantWarning: "set to another URL (https://other.example.com)"},
		{name: "webhook, deliveries failing", configured: deadURL, set: deadURL, pending: true,
			wantLine: []string{"Telegram webhook: set to http://127.0.0.1", "1 update(s) waiting"}, wantWarning: "the last delivery failed at"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tg := telegramtest.New(t, telegramtest.WithWebhookRetry(time.Hour))
			if tt.set != "" {
				client, err := botapi.New(tg.Token(), redactor.New(nil), botapi.WithBaseURL(tg.URL()))
				if err != nil {
					t.Fatal(err)
				}
				if err := client.SetWebhook(context.Background(), botapi.Webhook{URL: tt.set, SecretToken: secret}); err != nil {
					t.Fatal(err)
				}
			}
			if tt.pending {
				tg.Enqueue(models.Update{Message: &models.Message{ID: 1, Chat: models.Chat{ID: 42}, Text: "hi"}})
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				if err := tg.WaitUntil(ctx, func() bool { return len(tg.Deliveries()) > 0 }); err != nil {
					t.Fatal(err)
				}
			}
			cfg := Config{BotToken: tg.Token(), APIURL: tg.URL(), WebhookURL: tt.configured, WebhookListen: ":8080", WebhookSecret: secret}
			var out bytes.Buffer
			r := &report{w: &out}
			doctorUpdates(r, cfg)
			doctorWebhook(context.Background(), r, cfg, &http.Client{})
			text := out.String()
			for _, want := range tt.wantLine {
				if !strings.Contains(text, want) {
					t.Errorf("the output lacks %q:\n%s", want, text)
				}
			}
			if tt.wantWarning == "" && len(r.warnings)+len(r.problems) > 0 {
				t.Errorf("warnings %q, problems %q; want none", r.warnings, r.problems)
			}
			if tt.wantWarning != "" && !strings.Contains(strings.Join(r.warnings, "\n"), tt.wantWarning) {
				t.Errorf("warnings %q lack %q", r.warnings, tt.wantWarning)
			}
			all := text + strings.Join(r.warnings, "\n")
			if strings.Contains(all, secret) || strings.Contains(all, "hard-to-guess-path") || strings.Contains(all, tg.Token()) {
				t.Errorf("the output shows the secret, the URL's path or the token:\n%s", all)
			}
		})
	}
}

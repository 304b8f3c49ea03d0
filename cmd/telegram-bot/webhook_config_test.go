package main

import (
	"slices"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/chat"
)

func TestParseWebhook(t *testing.T) {
	const secret = "operator-webhook-secret_0013"
	derived := chat.DeriveWebhookSecret(testBotToken)
	tests := []struct {
		name                     string
		url, listen, secret, api string
		wantURL, wantSecret      string
		wantDerived              bool
		wantErr, wantWarn        string
	}{
		{name: "polling"},
		{name: "polling, a secret set", secret: secret, wantSecret: secret, wantWarn: "TELEGRAM_WEBHOOK_URL is not"},
		{name: "derived secret", url: "https://bot.example.com/tg", wantURL: "https://bot.example.com/tg", wantSecret: derived, wantDerived: true},
		{name: "operator's secret", url: "https://bot.example.com/", secret: secret, listen: "0.0.0.0:8443", wantURL: "https://bot.example.com/", wantSecret: secret},
		{name: "secret with a bad character", url: "https://bot.example.com/", secret: "no/slashes+0123456789", wantErr: "TELEGRAM_WEBHOOK_SECRET must be 1 to 256 characters"},
		{name: "secret too long", url: "https://bot.example.com/", secret: strings.Repeat("s", 257), wantErr: "TELEGRAM_WEBHOOK_SECRET must be"},
		{name: "plain http to Telegram", url: "http://bot.example.com/", wantErr: "TELEGRAM_WEBHOOK_URL must be https"},
		{name: "plain http to a local Bot API server", url: "http://bot:8080/", api: "http://telegram-bot-api:8081", wantURL: "http://bot:8080/", wantSecret: derived, wantDerived: true},
		{name: "not a URL", url: "bot.example.com", wantErr: "TELEGRAM_WEBHOOK_URL must be an absolute https URL"},
		{name: "credentials in the URL", url: "https://user:" + secret + "@bot.example.com/", wantErr: "must not hold credentials"},
		{name: "listen without a port", url: "https://bot.example.com/", listen: "8080", wantErr: "TELEGRAM_WEBHOOK_LISTEN must be an address"},
		{name: "listen on port 0", url: "https://bot.example.com/", listen: ":0", wantErr: "TELEGRAM_WEBHOOK_LISTEN must be an address"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := goodEnv()
			e.WebhookURL, e.WebhookSecret, e.WebhookListen = tt.url, tt.secret, ":8080"
			if tt.listen != "" {
				e.WebhookListen = tt.listen
			}
			if tt.api != "" {
				e.APIURL = tt.api
			}
			c, err := e.Parse(nil)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse error = %v, want %q", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), secret) || (tt.secret != "" && strings.Contains(err.Error(), tt.secret)) {
					t.Errorf("the error holds the secret (length %d)", len(err.Error()))
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if c.WebhookURL != tt.wantURL || c.WebhookSecretDerived != tt.wantDerived {
				t.Errorf("URL %q, derived %v; want %q, %v", c.WebhookURL, c.WebhookSecretDerived, tt.wantURL, tt.wantDerived)
			}
			if c.WebhookSecret != tt.wantSecret {
				t.Errorf("the secret is not the one expected (length %d, want %d)", len(c.WebhookSecret), len(tt.wantSecret))
			}
			if tt.wantSecret != "" && !slices.Contains(c.Policy.SecretValues, tt.wantSecret) {
				t.Error("the webhook secret is not among the secret values the redactor knows")
			}
			if tt.wantWarn != "" && !slices.ContainsFunc(c.Warnings, func(w string) bool { return strings.Contains(w, tt.wantWarn) }) {
				t.Errorf("warnings %q lack %q", c.Warnings, tt.wantWarn)
			}
		})
	}
}

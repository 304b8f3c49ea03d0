package chat

import (
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

func TestSameWebhookURL(t *testing.T) {
	tests := []struct {
		a, b string
		want bool
	}{
		{"https://bot.example.com/tg", "https://bot.example.com/tg", true},
		{"https://bot.example.com", "https://bot.example.com/", true},
		{"https://Bot.Example.com:443/tg", "HTTPS://bot.example.com/tg", true},
		{"http://bot:80/tg", "http://bot/tg", true},
		{"https://bot.example.com/tg", "https://bot.example.com/TG", false},
		{"https://bot.example.com/tg", "https://bot.example.com/tg/", false},
		{"https://bot.example.com:8443/tg", "https://bot.example.com/tg", false},
		{"https://bot.example.com/tg?a=1", "https://bot.example.com/tg", false},
		{"https://other.example.com/tg", "https://bot.example.com/tg", false},
		{"", "https://bot.example.com/tg", false},
	}
	for _, tt := range tests {
		if got := SameWebhookURL(tt.a, tt.b); got != tt.want {
			t.Errorf("SameWebhookURL(%q, %q) = %v, want %v", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestDeriveWebhookSecret(t *testing.T) {
	a, b := DeriveWebhookSecret(telegramtest.DefaultToken), DeriveWebhookSecret(telegramtest.DefaultToken+"x")
	if a != DeriveWebhookSecret(telegramtest.DefaultToken) {
		t.Error("the derived secret is not stable")
	}
	if a == b {
		t.Error("two tokens derive the same secret")
	}
	if !ValidWebhookSecret(a) || len(a) != 43 {
		t.Errorf("the derived secret is not a valid secret_token of 43 characters (length %d)", len(a))
	}
	if strings.Contains(a, telegramtest.DefaultToken) || strings.Contains(telegramtest.DefaultToken, a) {
		t.Error("the derived secret holds the token")
	}
}

func TestValidWebhookSecret(t *testing.T) {
	tests := []struct {
		secret string
		want   bool
	}{
		{"a", true},
		{"A-Za-z0-9_", true},
		{strings.Repeat("x", 256), true},
		{"", false},
		{strings.Repeat("x", 257), false},
		{"with space", false},
		{"plus+slash/", false},
		{"é", false},
	}
	for _, tt := range tests {
		if got := ValidWebhookSecret(tt.secret); got != tt.want {
			t.Errorf("ValidWebhookSecret(%d characters) = %v, want %v", len(tt.secret), got, tt.want)
		}
	}
}

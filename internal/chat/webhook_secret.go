package chat

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
)

// webhookSecretLabel is what the derived secret_token is the HMAC of: a
// fixed label, so that the same bot token always gives the same secret.
const webhookSecretLabel = "telegram-agent webhook secret_token v1"

// DeriveWebhookSecret returns the webhook's secret_token for a bot token
// when none is configured: the HMAC-SHA256 of a fixed label keyed by the
// token, base64url without padding (43 characters of [A-Za-z0-9_-], which
// Telegram accepts). It is stable across restarts and tells nothing about
// the token; it is a secret all the same, for the redactor.
func DeriveWebhookSecret(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte(webhookSecretLabel))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// ValidWebhookSecret reports whether s is a secret_token Telegram accepts:
// 1 to 256 characters of A-Z, a-z, 0-9, _ and -.
func ValidWebhookSecret(s string) bool {
	if len(s) == 0 || len(s) > 256 {
		return false
	}
	for _, c := range s {
		if c != '_' && c != '-' && (c < '0' || c > '9') && (c < 'a' || c > 'z') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	return true
}

package main

import (
	"errors"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/volcanic/telegram-agent/internal/chat"
	"github.com/volcanic/telegram-agent/internal/chat/botapi"
)

// parseWebhook reads the webhook variables into c: TELEGRAM_WEBHOOK_URL
// selects webhook mode. The URL must be https (Telegram accepts nothing
// else) unless TELEGRAM_API_URL names another Bot API server: a local
// telegram-bot-api server delivers over plain http too. The secret is
// TELEGRAM_WEBHOOK_SECRET, or one derived from the bot token, stable
// across restarts. The problems name the variables, never their values.
func parseWebhook(e Env, c *Config) []error {
	raw, secret := strings.TrimSpace(e.WebhookURL), strings.TrimSpace(e.WebhookSecret)
	if raw == "" {
		if secret != "" {
			// Unused, but a secret all the same: redacted like in webhook mode.
			c.WebhookSecret = secret
			c.Warnings = append(c.Warnings, "TELEGRAM_WEBHOOK_SECRET is set but TELEGRAM_WEBHOOK_URL is not: the bot polls, and the secret is not used")
		}
		return nil
	}
	var errs []error
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http"):
		errs = append(errs, errors.New("TELEGRAM_WEBHOOK_URL must be an absolute https URL (the public address of the bot, through the proxy)"))
	case u.Scheme == "http" && hostOf(c.APIURL) == hostOf(botapi.DefaultBaseURL):
		errs = append(errs, errors.New("TELEGRAM_WEBHOOK_URL must be https: Telegram delivers to nothing else (plain http works only with a local Bot API server in TELEGRAM_API_URL)"))
	case u.User != nil || u.Fragment != "":
		errs = append(errs, errors.New("TELEGRAM_WEBHOOK_URL must not hold credentials or a #fragment (the secret goes in TELEGRAM_WEBHOOK_SECRET)"))
	default:
		c.WebhookURL = raw
	}
	c.WebhookListen = strings.TrimSpace(e.WebhookListen)
	if _, port, err := net.SplitHostPort(c.WebhookListen); err != nil || !validPort(port) {
		errs = append(errs, errors.New("TELEGRAM_WEBHOOK_LISTEN must be an address such as :8080 or 0.0.0.0:8080"))
	}
	switch {
	case secret != "" && !chat.ValidWebhookSecret(secret):
		errs = append(errs, errors.New("TELEGRAM_WEBHOOK_SECRET must be 1 to 256 characters of A-Z, a-z, 0-9, _ and - (Telegram's rule)"))
	case secret != "":
		c.WebhookSecret = secret
	case c.BotToken != "":
		c.WebhookSecret, c.WebhookSecretDerived = chat.DeriveWebhookSecret(c.BotToken), true
	}
	return errs
}

// validPort reports whether s is a TCP port number from 1 to 65535.
func validPort(s string) bool {
	n, err := strconv.Atoi(s)
	return err == nil && n >= 1 && n <= 65535
}

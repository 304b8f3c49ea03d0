package main

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/volcanic/telegram-agent/internal/chat"
)

// doctorUpdates says how the bot receives its updates: long polling, or a
// webhook (its host, the listener and where the secret comes from; never
// the secret).
func doctorUpdates(r *report, cfg Config) {
	if cfg.WebhookURL == "" {
		r.line("  updates: long polling (TELEGRAM_WEBHOOK_URL is not set)")
		return
	}
	secret := "TELEGRAM_WEBHOOK_SECRET"
	if cfg.WebhookSecretDerived {
		secret = "derived from the bot token"
	}
	r.line("  updates: webhook at %s, listening on %s, secret_token %s", originOf(cfg.WebhookURL), cfg.WebhookListen, secret)
}

// webhookInfo is the part of getWebhookInfo's answer the doctor shows.
type webhookInfo struct {
	URL                string `json:"url"`
	PendingUpdateCount int    `json:"pending_update_count"`
	LastErrorDate      int64  `json:"last_error_date"`
	LastErrorMessage   string `json:"last_error_message"`
}

// doctorWebhook shows getWebhookInfo: in webhook mode whether the webhook
// is set to TELEGRAM_WEBHOOK_URL, the updates waiting and Telegram's last
// delivery error; in polling mode a webhook still set, which the bot
// deletes before it polls.
func doctorWebhook(ctx context.Context, r *report, cfg Config, client *http.Client) {
	info, err := checkWebhook(ctx, client, cfg.APIURL, cfg.BotToken)
	if err != nil {
		r.problem("Telegram webhook: %v", err)
		return
	}
	if cfg.WebhookURL == "" {
		if info.URL != "" {
			r.warn("Telegram webhook: one is set (to %s), with %d update(s) waiting; the bot deletes it before it polls (or set TELEGRAM_WEBHOOK_URL for webhook mode)", originOf(info.URL), info.PendingUpdateCount)
		}
		return
	}
	switch {
	case info.URL == "":
		r.warn("Telegram webhook: none is set yet; the bot sets it to TELEGRAM_WEBHOOK_URL when it starts")
	case !chat.SameWebhookURL(info.URL, cfg.WebhookURL):
		r.warn("Telegram webhook: set to another URL (%s); the bot sets TELEGRAM_WEBHOOK_URL when it starts (is another instance running?)", originOf(info.URL))
	default:
		r.line("  Telegram webhook: set to %s, %d update(s) waiting", originOf(info.URL), info.PendingUpdateCount)
	}
	if info.LastErrorMessage != "" {
		at := time.Unix(info.LastErrorDate, 0).UTC().Format(time.RFC3339)
		if info.PendingUpdateCount > 0 {
			r.warn("Telegram webhook: the last delivery failed at %s: %s (check the domain, the port and the proxy)", at, info.LastErrorMessage)
		} else {
			r.line("  Telegram webhook: last delivery error at %s: %s", at, info.LastErrorMessage)
		}
	}
}

// checkWebhook calls getWebhookInfo.
func checkWebhook(ctx context.Context, client *http.Client, apiURL, token string) (webhookInfo, error) {
	var answer struct {
		OK     bool        `json:"ok"`
		Result webhookInfo `json:"result"`
	}
	status, err := getJSON(ctx, client, apiURL+"/bot"+token+"/getWebhookInfo", "", &answer)
	switch {
	case err != nil && status == 0:
		return webhookInfo{}, fmt.Errorf("cannot reach %s: %w", hostOf(apiURL), err)
	case status != http.StatusOK || err != nil || !answer.OK:
		return webhookInfo{}, fmt.Errorf("getWebhookInfo answered HTTP %d", status)
	}
	return answer.Result, nil
}

// originOf returns a URL's scheme and host: its path may be chosen to be
// hard to guess, so it is not shown.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "(unparsable URL)"
	}
	return u.Scheme + "://" + u.Host
}

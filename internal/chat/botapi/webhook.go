package botapi

import (
	"context"

	"github.com/go-telegram/bot/models"
)

// Webhook is what SetWebhook registers.
type Webhook struct {
	// URL is the public https URL Telegram POSTs the updates to.
	URL string
	// SecretToken is sent back by Telegram in the
	// X-Telegram-Bot-Api-Secret-Token header of every delivery.
	SecretToken string
	// AllowedUpdates are the update types Telegram delivers.
	AllowedUpdates []string
	// MaxConnections bounds Telegram's simultaneous deliveries (0:
	// Telegram's default of 40).
	MaxConnections int
}

type setWebhookParams struct {
	URL            string   `json:"url"`
	SecretToken    string   `json:"secret_token,omitempty"`
	AllowedUpdates []string `json:"allowed_updates"`
	MaxConnections int      `json:"max_connections,omitempty"`
}

// SetWebhook makes Telegram deliver the updates to w.URL (setWebhook),
// under the retry policy. The updates Telegram holds are kept: they are
// delivered to the new URL.
func (c *Client) SetWebhook(ctx context.Context, w Webhook) error {
	p := setWebhookParams(w)
	if p.AllowedUpdates == nil {
		p.AllowedUpdates = []string{}
	}
	return c.call(ctx, "setWebhook", p, nil)
}

type deleteWebhookParams struct {
	DropPendingUpdates bool `json:"drop_pending_updates"`
}

// DeleteWebhook removes the webhook (deleteWebhook), so that getUpdates
// works, under the retry policy. The updates Telegram holds are kept, for
// getUpdates to fetch.
func (c *Client) DeleteWebhook(ctx context.Context) error {
	return c.call(ctx, "deleteWebhook", deleteWebhookParams{}, nil)
}

// GetWebhookInfo returns the webhook's state (getWebhookInfo): its URL
// (empty when none is set), the updates waiting and the last delivery
// error. It makes one try: its callers check periodically.
func (c *Client) GetWebhookInfo(ctx context.Context) (*models.WebhookInfo, error) {
	var info models.WebhookInfo
	if err := c.callOnce(ctx, "getWebhookInfo", nil, &info); err != nil {
		return nil, err
	}
	return &info, nil
}

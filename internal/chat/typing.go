package chat

import (
	"context"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/backoff"
)

// startTyping shows the typing indicator until the returned func is
// called.
func (h *Host) startTyping(ctx context.Context, t target) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_ = h.api.SendChatAction(ctx, t.chatID, t.threadID, models.ChatActionTyping)
			if !backoff.Sleep(ctx, 4*time.Second) {
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}

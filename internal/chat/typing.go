package chat

import (
	"context"
	"time"

	"github.com/go-telegram/bot/models"
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
			if !sleep(ctx, 4*time.Second) {
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}

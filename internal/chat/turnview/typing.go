package turnview

import (
	"context"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/backoff"
)

// Typing shows the typing indicator until the returned func is called: an
// Answer every four seconds (the indicator lasts five), a failed one
// ignored.
func (o Outlet) Typing(ctx context.Context) func() {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			_, _ = o.Answer(ctx, Message{Action: models.ChatActionTyping})
			if !backoff.Sleep(ctx, 4*time.Second) {
				return
			}
		}
	}()
	return func() { cancel(); <-done }
}

package chat

import (
	"context"
	"encoding/json"
)

// updateSource delivers the bot's updates to the host until ctx ends. It
// hands every batch (each update's raw JSON) to take, and acknowledges to
// Telegram only the batches take reports taken: take journals the messages
// before it dispatches anything, so an update is never lost between the
// two. Long polling (pollSource) acknowledges with the next getUpdates
// offset; a webhook (webhookSource) answers each delivery 200 only once
// take has it. run returns nil when ctx ends, and an error when the source
// cannot work at all (its address is taken, Telegram refuses the webhook).
type updateSource interface {
	run(ctx context.Context, take func(ctx context.Context, batch []json.RawMessage) bool) error
}

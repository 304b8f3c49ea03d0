package botapi

import (
	"context"
	"encoding/json"
	"time"
)

type getUpdatesParams struct {
	Offset         int64    `json:"offset"`
	Timeout        int      `json:"timeout"`
	AllowedUpdates []string `json:"allowed_updates"`
}

// GetUpdates long-polls for the updates from offset on (getUpdates),
// waiting up to timeout, and returns each update's raw JSON (for the
// journal). It makes one try: the poller backs off itself.
func (c *Client) GetUpdates(ctx context.Context, offset int64, timeout time.Duration, allowed []string) ([]json.RawMessage, error) {
	body, err := json.Marshal(getUpdatesParams{Offset: offset, Timeout: int(timeout / time.Second), AllowedUpdates: allowed})
	if err != nil {
		return nil, c.s.encodeError("getUpdates", err)
	}
	var out []json.RawMessage
	if err := c.post(ctx, "getUpdates", body, "application/json", timeout+30*time.Second, &out); err != nil {
		return nil, err
	}
	return out, nil
}

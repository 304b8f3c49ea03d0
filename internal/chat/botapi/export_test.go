package botapi

import (
	"context"
	"time"
)

// SetWait replaces how c sleeps between tries, for every view of c.
func (c *Client) SetWait(wait func(ctx context.Context, d time.Duration) bool) { c.s.wait = wait }

// Retry runs call under c's retry policy.
func (c *Client) Retry(ctx context.Context, method string, call func(context.Context) error) error {
	return c.retry(ctx, method, call)
}

// Policy returns c's retry policy.
func (c *Client) Policy() RetryPolicy { return c.policy }

package botapi_test

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

func newClient(t *testing.T, opts ...botapi.Option) *botapi.Client {
	t.Helper()
	c, err := botapi.New("4242:retry-test-token", redactor.New(nil), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// A 429 is retried after its whole retry_after, however far beyond the
// policy's MaxDelay; when the caller's context ends before that, the call
// gives up at once instead of retrying early.
func TestRetryHonoursRetryAfter(t *testing.T) {
	tooMany := &botapi.Error{Method: "sendMessage", Code: 429, Description: "Too Many Requests: retry after 90", RetryAfter: 90 * time.Second}
	tests := []struct {
		name       string
		deadline   time.Duration // 0: none
		wantWaits  []time.Duration
		wantCalls  int
		wantFailed bool
	}{
		{"no deadline: waits the whole retry_after", 0, []time.Duration{90 * time.Second}, 2, false},
		{"a deadline after it: waits", time.Hour, []time.Duration{90 * time.Second}, 2, false},
		{"a deadline before it: gives up", time.Minute, nil, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var waits []time.Duration
			c := newClient(t, botapi.WithRetryPolicy(botapi.RetryPolicy{Attempts: 4, BaseDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond}))
			c.SetWait(func(ctx context.Context, d time.Duration) bool { waits = append(waits, d); return true })
			ctx := t.Context()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			calls := 0
			err := c.Retry(ctx, "sendMessage", func(context.Context) error {
				calls++
				if calls == 1 {
					return tooMany
				}
				return nil
			})
			if (err != nil) != tt.wantFailed {
				t.Errorf("retry = %v, want failed %v", err, tt.wantFailed)
			}
			if diff := cmp.Diff(tt.wantWaits, waits); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantCalls, calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

// A 5xx or a call without an answer backs off and is retried until the
// tries run out; a 400 or a 403 is returned at once.
func TestRetryByClass(t *testing.T) {
	tests := []struct {
		name      string
		err       *botapi.Error
		wantCalls int
	}{
		{"a server error", &botapi.Error{Method: "m", Code: 502, Description: "Bad Gateway"}, 3},
		{"no answer", &botapi.Error{Method: "m", Description: "connection refused"}, 3},
		{"a bad request", &botapi.Error{Method: "m", Code: 400, Description: "Bad Request: chat not found"}, 1},
		{"forbidden", &botapi.Error{Method: "m", Code: 403, Description: "Forbidden: bot was blocked by the user"}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var waits []time.Duration
			c := newClient(t, botapi.WithRetryPolicy(botapi.RetryPolicy{Attempts: 3, BaseDelay: time.Second, MaxDelay: 4 * time.Second}))
			c.SetWait(func(ctx context.Context, d time.Duration) bool { waits = append(waits, d); return true })
			calls := 0
			err := c.Retry(t.Context(), "m", func(context.Context) error { calls++; return tt.err })
			if err != tt.err {
				t.Errorf("retry = %v, want the last error", err)
			}
			if diff := cmp.Diff(tt.wantCalls, calls); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
			for i, d := range waits {
				if lo, hi := (time.Second<<i)/2, time.Second<<i; d < lo || d > hi {
					t.Errorf("back-off %d = %v, want %v to %v", i, d, lo, hi)
				}
			}
		})
	}
}

// WithAttempts bounds the tries of a view, never above the policy's.
func TestWithAttempts(t *testing.T) {
	tests := []struct {
		policy, n, want int
	}{{0, 2, 1}, {1, 2, 1}, {2, 2, 2}, {8, 2, 2}, {8, 1, 1}, {8, 0, 1}}
	for _, tt := range tests {
		t.Run(strconv.Itoa(tt.policy)+"/"+strconv.Itoa(tt.n), func(t *testing.T) {
			c := newClient(t, botapi.WithRetryPolicy(botapi.RetryPolicy{Attempts: tt.policy}))
			if diff := cmp.Diff(tt.want, c.WithAttempts(tt.n).Policy().Attempts); diff != "" {
				t.Errorf("attempts (-want +got):\n%s", diff)
			}
		})
	}
}

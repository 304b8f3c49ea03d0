package chat

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// A 429 is retried after its whole retry_after, however far beyond the
// policy's MaxDelay; when the caller's context ends before that, the call
// gives up at once instead of retrying early.
func TestRetryHonoursRetryAfter(t *testing.T) {
	tooMany := &APIError{Method: "sendMessage", Code: 429, Description: "Too Many Requests: retry after 90", RetryAfter: 90 * time.Second}
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
			p := RetryPolicy{Attempts: 4, BaseDelay: time.Millisecond, MaxDelay: 10 * time.Millisecond,
				wait: func(ctx context.Context, d time.Duration) bool { waits = append(waits, d); return true }}
			ctx := t.Context()
			if tt.deadline > 0 {
				var cancel context.CancelFunc
				ctx, cancel = context.WithTimeout(ctx, tt.deadline)
				defer cancel()
			}
			calls := 0
			err := p.retry(ctx, slog.New(slog.DiscardHandler), "sendMessage", func(context.Context) error {
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

// Transient notices get at most two tries, whatever the host's policy.
func TestNoticePolicy(t *testing.T) {
	tests := []struct {
		attempts, want int
	}{{0, 1}, {1, 1}, {2, 2}, {8, 2}}
	for _, tt := range tests {
		t.Run(itoa64(int64(tt.attempts)), func(t *testing.T) {
			if diff := cmp.Diff(tt.want, noticePolicy(RetryPolicy{Attempts: tt.attempts}).Attempts); diff != "" {
				t.Errorf("attempts (-want +got):\n%s", diff)
			}
		})
	}
}

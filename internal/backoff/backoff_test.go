package backoff_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/backoff"
)

func TestPolicyBounds(t *testing.T) {
	const ms = time.Millisecond
	tests := []struct {
		name   string
		p      backoff.Policy
		n      int
		lo, hi time.Duration
	}{
		{"zero policy waits nothing", backoff.Policy{}, 3, 0, 0},
		{"first retry is Base", backoff.Policy{Base: 100 * ms, Max: time.Second}, 0, 100 * ms, 100 * ms},
		{"doubles", backoff.Policy{Base: 100 * ms, Max: time.Second}, 2, 400 * ms, 400 * ms},
		{"capped by Max", backoff.Policy{Base: 100 * ms, Max: time.Second}, 4, time.Second, time.Second},
		{"negative n is the first retry", backoff.Policy{Base: 100 * ms}, -1, 100 * ms, 100 * ms},
		{"no Max keeps doubling", backoff.Policy{Base: time.Second}, 10, 1024 * time.Second, 1024 * time.Second},
		{"huge n does not overflow", backoff.Policy{Base: time.Hour, Max: time.Minute}, 1 << 20, time.Minute, time.Minute},
		{"huge n without Max saturates", backoff.Policy{Base: time.Hour}, 1 << 20, math.MaxInt64, math.MaxInt64},
		{"half jitter", backoff.Policy{Base: 500 * ms, Max: time.Minute, Jitter: 0.5}, 1, 500 * ms, time.Second},
		{"full jitter", backoff.Policy{Base: 100 * ms, Jitter: 1}, 0, 0, 100 * ms},
		{"jitter above 1 is 1", backoff.Policy{Base: 100 * ms, Jitter: 7}, 0, 0, 100 * ms},
		{"negative jitter is none", backoff.Policy{Base: 100 * ms, Jitter: -1}, 0, 100 * ms, 100 * ms},
		{"jitter applies after the cap", backoff.Policy{Base: time.Second, Max: 4 * time.Second, Jitter: 0.5}, 9, 2 * time.Second, 4 * time.Second},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lo, hi := tt.p.Bounds(tt.n)
			if lo != tt.lo || hi != tt.hi {
				t.Fatalf("Bounds(%d) = [%v, %v], want [%v, %v]", tt.n, lo, hi, tt.lo, tt.hi)
			}
			seen := map[time.Duration]bool{}
			for range 200 {
				d := tt.p.Delay(tt.n)
				if d < lo || d > hi {
					t.Fatalf("Delay(%d) = %v, outside [%v, %v]", tt.n, d, lo, hi)
				}
				seen[d] = true
			}
			if lo < hi && len(seen) < 2 {
				t.Errorf("Delay(%d) drew %d distinct waits in 200 tries; the jitter does not vary", tt.n, len(seen))
			}
		})
	}
}

func TestPolicyWait(t *testing.T) {
	p := backoff.Policy{Base: time.Second, Max: 4 * time.Second}
	limited := backoff.Policy{Base: time.Second, Max: 4 * time.Second, MaxRetryAfter: time.Minute}
	short, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	tests := []struct {
		name       string
		p          backoff.Policy
		ctx        context.Context
		n          int
		retryAfter time.Duration
		want       time.Duration
		ok         bool
	}{
		{"no Retry-After backs off", p, context.Background(), 3, 0, 4 * time.Second, true},
		{"Retry-After beyond Max is not shortened", p, context.Background(), 0, time.Minute, time.Minute, true},
		{"Retry-After shorter than the back-off is waited as asked", p, context.Background(), 5, 2 * time.Second, 2 * time.Second, true},
		{"Retry-After within MaxRetryAfter", limited, context.Background(), 0, time.Minute, time.Minute, true},
		{"Retry-After beyond MaxRetryAfter gives up", limited, context.Background(), 0, time.Minute + 1, time.Minute + 1, false},
		{"Retry-After beyond the deadline gives up", p, short, 0, 20 * time.Second, 20 * time.Second, false},
		{"Retry-After within the deadline", p, short, 0, time.Second, time.Second, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d, ok := tt.p.Wait(tt.ctx, tt.n, tt.retryAfter)
			if d != tt.want || ok != tt.ok {
				t.Errorf("Wait(n=%d, retryAfter=%v) = %v, %v; want %v, %v", tt.n, tt.retryAfter, d, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestSleep(t *testing.T) {
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	tests := []struct {
		name string
		ctx  context.Context
		d    time.Duration
		want bool
	}{
		{"zero passes at once", context.Background(), 0, true},
		{"a short wait passes", context.Background(), time.Millisecond, true},
		{"an ended context with no wait", ended, 0, false},
		{"an ended context cuts a long wait", ended, time.Hour, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := backoff.Sleep(tt.ctx, tt.d); got != tt.want {
				t.Errorf("Sleep(%v) = %v, want %v", tt.d, got, tt.want)
			}
		})
	}
}

func TestSleepEndsWithTheContext(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan bool)
	go func() { done <- backoff.Sleep(ctx, time.Hour) }()
	cancel()
	if <-done {
		t.Error("Sleep reported that an hour passed after its context was cancelled")
	}
}

func TestClock(t *testing.T) {
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	var slept []time.Duration
	c := backoff.Clock{
		NowFunc:   func() time.Time { return at },
		SleepFunc: func(_ context.Context, d time.Duration) bool { slept = append(slept, d); return true },
	}
	if got := c.Now(); !got.Equal(at) {
		t.Errorf("Now = %v, want %v", got, at)
	}
	if !c.Sleep(context.Background(), time.Hour) || len(slept) != 1 || slept[0] != time.Hour {
		t.Errorf("Sleep did not go through SleepFunc: %v", slept)
	}
	var system backoff.Clock
	if d := time.Since(system.Now()); d < 0 || d > time.Minute {
		t.Errorf("the zero Clock's Now is %v from time.Now", d)
	}
	ended, cancel := context.WithCancel(context.Background())
	cancel()
	if system.Sleep(ended, time.Hour) {
		t.Error("the zero Clock's Sleep did not end with its context")
	}
}

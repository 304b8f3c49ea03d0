package turnview

import (
	"context"
	"sync"
	"time"
)

// throttle calls push at most once per interval, on its own goroutine,
// after kick; stop ends it without a last push.
type throttle struct {
	interval time.Duration
	push     func(context.Context)
	wake     chan struct{}
	quit     chan struct{}
	done     chan struct{}
	once     sync.Once
}

func newThrottle(ctx context.Context, interval time.Duration, push func(context.Context)) *throttle {
	t := &throttle{interval: interval, push: push, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go t.loop(ctx)
	return t
}

func (t *throttle) kick() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

func (t *throttle) stop() {
	t.once.Do(func() { close(t.quit) })
	<-t.done
}

func (t *throttle) loop(ctx context.Context) {
	defer close(t.done)
	var last time.Time
	for {
		select {
		case <-t.quit:
			return
		case <-ctx.Done():
			return
		case <-t.wake:
		}
		if wait := t.interval - time.Since(last); wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-t.quit:
				timer.Stop()
				return
			case <-ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
		}
		t.push(ctx)
		last = time.Now()
	}
}

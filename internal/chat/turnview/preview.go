package turnview

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
)

// ErrHeld is Preview's error for a preview it did not try: a 429's
// retry_after still runs.
var ErrHeld = errors.New("turnview: a preview is held back until telegram's retry_after")

// Gate holds back a run of previews (one streamed segment's, one status
// message's) after a 429, until its retry_after: the run's own, so that a
// 429 on one never changes how another shows.
type Gate struct {
	mu        sync.Mutex
	notBefore time.Time
}

func (g *Gate) held() bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	return time.Now().Before(g.notBefore)
}

// note closes the gate for a 429's retry_after.
func (g *Gate) note(err error) {
	if g == nil || botapi.ClassOf(err) != botapi.RateLimited {
		return
	}
	g.mu.Lock()
	g.notBefore = time.Now().Add(botapi.RetryAfter(err))
	g.mu.Unlock()
}

// Preview sends m with one try: the next preview follows soon and
// replaces it, and a retry_after must not hold the turn. With a gate, a
// 429 closes it, and until its retry_after every preview through it is
// dropped untried (ErrHeld). It returns the id of the message sent or
// edited; its lifetime is ctx.
func (o Outlet) Preview(ctx context.Context, g *Gate, m Message) (int, error) {
	if g.held() {
		return 0, ErrHeld
	}
	id, err := o.send(ctx, o.v.preview, m)
	if err != nil {
		g.note(err)
	}
	return id, err
}

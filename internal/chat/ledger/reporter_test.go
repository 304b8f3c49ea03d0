package ledger

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// errPassing and errForGood are a failed try's causes as Passing tells them.
var (
	errPassing = errors.New("telegram: 502")
	errForGood = errors.New("telegram: 403")
)

// outlet is a chat whose sends fail with fails, in turn, then succeed.
type outlet struct {
	mu    sync.Mutex
	fails []error
	tries []string
}

// Post runs try at once: the tries after a pause run on the pause's
// goroutine, which the Reporter's group counts, so that waiting for the
// group waits for every try.
func (o *outlet) Post(try func(context.Context, Send)) { try(context.Background(), o.send) }

func (o *outlet) send(_ context.Context, text string, _ int) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.tries = append(o.tries, text)
	if len(o.fails) == 0 {
		return nil
	}
	err := o.fails[0]
	o.fails = o.fails[1:]
	return err
}

func (o *outlet) String() string { return "1001" }

func (o *outlet) sent() []string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.tries
}

// A report is tried again after a passing failure until it goes out, and
// only then marked sent; a refusal for good, or a report no longer
// needed, ends it unsent.
func TestReporter(t *testing.T) {
	tests := []struct {
		name      string
		fails     []error
		needed    bool
		wantTries int
		wantSent  bool
	}{
		{"sent at once", nil, true, 1, true},
		{"sent after two passing failures", []error{errPassing, errPassing}, true, 3, true},
		{"refused for good", []error{errPassing, errForGood}, true, 2, false},
		{"no longer needed", nil, false, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var pauses sync.WaitGroup
			r := &Reporter{Passing: func(err error) bool { return errors.Is(err, errPassing) }, Pause: time.Millisecond,
				Life: t.Context(), Ended: func() bool { return false }, Go: pauses.Go, Logger: slog.New(slog.DiscardHandler)}
			out := &outlet{fails: tt.fails}
			done := make(chan bool, 1)
			r.Report(out, "⚠️ interrupted", 5, func() bool { return tt.needed }, func() { done <- true })
			pauses.Wait()
			sent := len(done) == 1
			if diff := cmp.Diff([]any{tt.wantTries, tt.wantSent}, []any{len(out.sent()), sent}); diff != "" {
				t.Errorf("tries and sent (-want +got):\n%s", diff)
			}
		})
	}
}

// The end of the host's life ends the pauses: no try follows.
func TestReporterEndsWithItsLife(t *testing.T) {
	life, cancel := context.WithCancel(t.Context())
	var pauses sync.WaitGroup
	r := &Reporter{Passing: func(error) bool { return true }, Pause: time.Hour, Life: life, Ended: func() bool { return false }, Go: pauses.Go, Logger: slog.New(slog.DiscardHandler)}
	out := &outlet{fails: []error{errPassing}}
	r.Report(out, "text", 0, nil, func() { t.Error("sent after the host's life ended") })
	cancel()
	pauses.Wait()
	if n := len(out.sent()); n != 1 {
		t.Errorf("%d tries, want the one before the end", n)
	}
}

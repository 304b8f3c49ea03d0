package tools

import (
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// TestProgressThrottled checks, with an injected ticker, that progress is
// reported only on a tick of the configured interval, and only when the
// output changed since the last report.
func TestProgressThrottled(t *testing.T) {
	ticks := make(chan time.Time)
	var interval time.Duration
	b := newBashTool(WithProgressInterval(time.Minute))
	b.cfg.newTicker = func(d time.Duration) (<-chan time.Time, func()) {
		interval = d
		return ticks, func() {}
	}
	reports := make(chan string, 10)
	sink := newTailBuffer(100, 1000, 1000, func() (*os.File, error) { return nil, os.ErrInvalid })
	stop := b.startProgress(func(r agent.Result) { reports <- agent.TextOf(r.Content) }, sink)

	tick := func() { ticks <- time.Time{} }
	sink.Write([]byte("a\n"))
	tick()
	first := <-reports
	sink.Write([]byte("b\n"))
	tick()
	second := <-reports
	// Two ticks without new output: the second can be sent only once the
	// first was handled, and stop waits for the second.
	tick()
	tick()
	stop()
	close(reports)
	got := []string{first, second}
	for r := range reports {
		got = append(got, r)
	}
	if diff := cmp.Diff([]string{"a\n", "a\nb\n"}, got); diff != "" {
		t.Errorf("progress reports (-want +got):\n%s", diff)
	}
	if interval != time.Minute {
		t.Errorf("the ticker runs every %v, want the progress interval, 1m", interval)
	}
}

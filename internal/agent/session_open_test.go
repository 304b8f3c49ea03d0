package agent_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// TestSlowTranscriptBlocksNoOtherSession checks that reading one session's
// transcript holds no lock other sessions need, and that the same id opened
// twice meanwhile reads its transcript once and gives one session.
func TestSlowTranscriptBlocksNoOtherSession(t *testing.T) {
	dir := t.TempDir()
	a := newTestAgent(t, agenttest.NewFauxProvider(), agent.WithSessionDir(dir))
	entered := make(chan struct{})
	release := make(chan struct{})
	var slowReads atomic.Int32
	a.SetOpenTranscript(func(path string, logger *slog.Logger) (*agent.Transcript, []agent.Message, error) {
		if filepath.Base(path) == "slow.jsonl" {
			slowReads.Add(1)
			close(entered)
			<-release
		}
		return agent.OpenTranscript(path, logger)
	})

	type opened struct {
		s   *agent.Session
		err error
	}
	first, second := make(chan opened, 1), make(chan opened, 1)
	go func() {
		s, err := a.Session(context.Background(), agent.SessionOptions{ID: "slow"})
		first <- opened{s, err}
	}()
	<-entered
	go func() {
		s, err := a.Session(context.Background(), agent.SessionOptions{ID: "slow"})
		second <- opened{s, err}
	}()

	// The slow transcript is still being read: another session opens.
	fast := make(chan error, 1)
	go func() {
		_, err := a.Session(context.Background(), agent.SessionOptions{ID: "fast"})
		fast <- err
	}()
	select {
	case err := <-fast:
		if err != nil {
			t.Fatalf("opening another session: %v", err)
		}
	case <-time.After(30 * time.Second): // a hang guard only
		t.Fatal("opening another session waited for the slow transcript")
	}
	close(release)
	a1, a2 := <-first, <-second
	if a1.err != nil || a2.err != nil {
		t.Fatalf("opening the slow session: %v, %v", a1.err, a2.err)
	}
	if a1.s != a2.s {
		t.Error("two opens of one id gave two sessions")
	}
	if n := slowReads.Load(); n != 1 {
		t.Errorf("the slow transcript was read %d times, want once", n)
	}
}

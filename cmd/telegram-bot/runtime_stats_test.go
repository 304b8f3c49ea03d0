package main

import (
	"bytes"
	"context"
	"log/slog"
	"regexp"
	"strconv"
	"sync"
	"testing"
	"time"
)

// lockedBuffer is a bytes.Buffer safe for the logger's goroutine and the
// test's.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The runtime stats line carries the goroutine count and the live heap,
// every interval and once more when the bot stops.
func TestLogRuntimeStats(t *testing.T) {
	var buf lockedBuffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); logRuntimeStats(ctx, logger, 10*time.Millisecond) }()
	line := regexp.MustCompile(`msg="runtime stats" goroutines=(\d+) heap_bytes=(\d+)`)
	deadline := time.Now().Add(10 * time.Second)
	for len(line.FindAllString(buf.String(), -1)) < 2 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	found := line.FindAllStringSubmatch(buf.String(), -1)
	if len(found) < 3 {
		t.Fatalf("%d runtime stats lines, want at least two ticks and one at the end:\n%s", len(found), buf.String())
	}
	for _, m := range found {
		g, _ := strconv.Atoi(m[1])
		heap, _ := strconv.Atoi(m[2])
		if g < 2 || heap <= 0 {
			t.Errorf("goroutines=%d heap_bytes=%d, want at least 2 goroutines (the test's and the logger's) and a heap", g, heap)
		}
	}
}

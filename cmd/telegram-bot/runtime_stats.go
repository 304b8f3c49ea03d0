package main

import (
	"context"
	"log/slog"
	"runtime"
	"runtime/metrics"
	"time"
)

// runtimeStatsEvery is how often the bot logs its goroutines and heap at
// Debug: often enough to see a leak grow over an hour, rare enough not to
// crowd the log.
const runtimeStatsEvery = time.Minute

// logRuntimeStats logs "runtime stats" with the number of goroutines and
// the live heap every interval until ctx ends, and once more then, so an
// operator (or the chaos suite, which parses the line) can tell a leak
// from load. It returns when ctx ends.
func logRuntimeStats(ctx context.Context, logger *slog.Logger, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	log := func() {
		metrics.Read(sample)
		heap := uint64(0)
		if sample[0].Value.Kind() == metrics.KindUint64 {
			heap = sample[0].Value.Uint64()
		}
		logger.Debug("runtime stats", "goroutines", runtime.NumGoroutine(), "heap_bytes", heap)
	}
	for {
		select {
		case <-ctx.Done():
			log()
			return
		case <-tick.C:
			log()
		}
	}
}

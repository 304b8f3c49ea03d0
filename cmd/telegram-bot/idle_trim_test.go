package main

import (
	"context"
	"runtime/metrics"
	"testing"
	"time"
)

// TestIdleTrimmerObserve feeds the trimmer a run of counter readings: it
// trims once the bot goes quiet after enough work, never while it is busy,
// and not again until enough more has been allocated.
func TestIdleTrimmerObserve(t *testing.T) {
	const mb = 1 << 20
	tests := []struct {
		name     string
		readings []uint64
		want     []bool
	}{
		{"start-up, then quiet", []uint64{3 * mb, 3 * mb}, []bool{false, true}},
		{"busy, never quiet", []uint64{mb, 2 * mb, 3 * mb, 4 * mb}, []bool{false, false, false, false}},
		{"quiet but little done", []uint64{idleTrimAfter / 2, idleTrimAfter / 2, idleTrimAfter/2 + 1}, []bool{false, false, false}},
		{"a little polling after a trim", []uint64{2 * mb, 2 * mb, 2*mb + 8<<10, 2*mb + 16<<10, 2*mb + 24<<10}, []bool{false, true, false, false, false}},
		{"a turn after a trim", []uint64{2 * mb, 2 * mb, 4 * mb, 4 * mb, 4 * mb}, []bool{false, true, false, true, false}},
		{"quiet is at most idleQuiet", []uint64{2 * mb, 2*mb + idleQuiet, 2*mb + 2*idleQuiet + 1}, []bool{false, true, false}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var trim idleTrimmer
			for i, r := range tt.readings {
				if got := trim.observe(r); got != tt.want[i] {
					t.Errorf("reading %d (%d bytes): trim = %v, want %v", i, r, got, tt.want[i])
				}
			}
		})
	}
}

// TestTrimWhenIdleForcesACollection runs the loop after allocating more
// than idleTrimAfter: a forced collection (what debug.FreeOSMemory runs)
// follows once the process is quiet, and the loop returns when ctx ends.
func TestTrimWhenIdleForcesACollection(t *testing.T) {
	forced := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(forced)
	before := forced[0].Value.Uint64()
	var keep [][]byte
	for range 4 * idleTrimAfter / (64 << 10) {
		keep = append(keep, make([]byte, 64<<10))
	}
	t.Logf("allocated %d chunks of 64 KiB", len(keep))
	keep = nil
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); trimWhenIdle(ctx, 20*time.Millisecond) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		metrics.Read(forced)
		if forced[0].Value.Uint64() > before {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no forced collection within 10 s of going quiet")
		}
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	<-done
}

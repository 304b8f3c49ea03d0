package main

import (
	"context"
	"runtime/debug"
	"runtime/metrics"
	"time"
)

// idleTrimEvery is how often the bot looks whether it has gone quiet:
// the memory a turn freed goes back to the system within two looks of its
// end.
const idleTrimEvery = time.Second

// idleTrimAfter is how much the heap must have allocated since the last
// trim before a quiet moment is worth one: an idle bot's polling
// allocates a few kB a request, so it trims once in tens of polls.
const idleTrimAfter = 256 << 10

// idleQuiet is the most an interval may allocate and still count as quiet.
const idleQuiet = 64 << 10

// idleTrimmer decides, from the heap's cumulative allocation counter read
// once an interval, when the bot has done some work and then gone quiet.
// Left alone, the runtime keeps the heap's free pages resident up to its
// goal (at least 4 MB), which is most of an idle bot's anonymous memory.
type idleTrimmer struct {
	atTrim, atLast uint64
}

// observe takes the counter's value now and reports whether to trim.
func (t *idleTrimmer) observe(allocs uint64) bool {
	last := t.atLast
	t.atLast = allocs
	if allocs-last > idleQuiet || allocs-t.atTrim < idleTrimAfter {
		return false
	}
	t.atTrim = allocs
	return true
}

// trimWhenIdle returns the heap's free memory to the system
// (debug.FreeOSMemory: a collection, then every free page released)
// whenever the bot goes quiet after allocating idleTrimAfter or more. A
// trim costs a collection of the live heap, about a millisecond, at most
// once per idleTrimAfter allocated and only below idleQuiet a second. It
// returns when ctx ends.
func trimWhenIdle(ctx context.Context, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	sample := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	var trim idleTrimmer
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			metrics.Read(sample)
			if sample[0].Value.Kind() == metrics.KindUint64 && trim.observe(sample[0].Value.Uint64()) {
				debug.FreeOSMemory()
			}
		}
	}
}

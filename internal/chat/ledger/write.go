package ledger

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
)

// The journal's writes: appends fsync'd once per call, state marks kept in
// memory when the disk refuses them, and the compaction to the live
// entries.

// liveLocked returns what a compacted journal holds: the interrupted
// messages and prompts (for /retry), the pending ones and the highest
// update id (as done, when nothing else keeps it), in the order they came.
func (j *Journal) liveLocked() []Entry {
	live := make(map[int64]Entry, len(j.interrupted)+len(j.pending)+len(j.unreported)+1)
	for _, es := range j.interrupted {
		for _, e := range es {
			live[e.key()] = e
		}
	}
	for _, e := range j.unreported {
		live[e.key()] = e
	}
	for _, e := range j.pending {
		live[e.key()] = e
	}
	if _, kept := live[j.top.key()]; !j.top.Origin.IsZero() && !kept {
		live[j.top.key()] = j.top
	}
	keep := slices.Collect(maps.Values(live))
	sort.Slice(keep, func(i, j int) bool { return bySeq(keep[i], keep[j]) < 0 })
	return keep
}

// rewriteLocked replaces the file with its live entries, atomically.
func (j *Journal) rewriteLocked() error {
	live := j.liveLocked()
	entries := make([]any, len(live))
	for i, e := range live {
		entries[i] = e
	}
	j.hooked(false)
	if err := j.log.Rewrite(entries...); err != nil {
		return fmt.Errorf("ledger: journal: %w", err)
	}
	j.hooked(true)
	j.doneSince, j.compactedAt, j.unsynced, j.compactPending = 0, j.log.Size(), nil, false
	return nil
}

// Write appends entries and fsyncs the file once; past the thresholds it
// then compacts the file. The state changes that could not be written
// before go first. When the append fails nothing of entries counts: the
// caller does not acknowledge their updates.
func (j *Journal) Write(entries ...Entry) error {
	if len(entries) == 0 {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.appendLocked(entries)
}

func (j *Journal) appendLocked(entries []Entry) error {
	if j.closed {
		return errors.New("ledger: journal: closed")
	}
	lines := make([]any, 0, len(j.unsynced)+len(entries))
	for _, e := range j.unsynced {
		lines = append(lines, e)
	}
	for _, e := range entries {
		lines = append(lines, e)
	}
	written := len(lines) > 0
	if written {
		j.hooked(false)
	}
	if err := j.log.Append(lines...); err != nil {
		return fmt.Errorf("ledger: journal: %w", err)
	}
	if written {
		j.hooked(true)
	}
	j.unsynced = nil
	for _, e := range entries {
		j.track(e)
	}
	if j.doneSince >= j.compactDone || j.log.Size()-j.compactedAt >= int64(j.compactBytes) {
		// The entries are safely written: a failed compaction leaves the
		// journal as it was, longer only.
		if err := j.rewriteLocked(); err != nil {
			j.logger.Warn("the inbound journal could not be compacted; it keeps growing", "err", err)
			j.doneSince, j.compactedAt = 0, j.log.Size()
		}
	}
	return nil
}

// hooked runs the test hook, if any.
func (j *Journal) hooked(written bool) {
	if j.hook != nil {
		j.hook(written)
	}
}

// markLocked appends the state change e. When that fails (a full disk) e
// still counts in memory, and is written later (see unsynced): a message
// whose answer was delivered while the disk was full must not be reported
// as interrupted after the next restart.
func (j *Journal) markLocked(e Entry) error {
	err := j.appendLocked([]Entry{e})
	if err != nil && !j.closed {
		j.track(e)
		j.unsynced = append(j.unsynced, e)
	}
	return err
}

// mark is markLocked, taking the lock; it marks nothing for no origin.
func (j *Journal) mark(o Origin, s State) error {
	if o.IsZero() {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.markLocked(Entry{Origin: o, State: s})
}

// Flush writes the state changes that could not be written before, and
// the start-up compaction that could not be, if any.
func (j *Journal) Flush() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	switch {
	case j.closed:
		return nil
	case j.compactPending:
		return j.rewriteLocked()
	case len(j.unsynced) > 0:
		return j.appendLocked(nil)
	}
	return nil
}

// track keeps the in-memory state a compaction writes in step with e.
func (j *Journal) track(e Entry) {
	if (e.State == Queued || e.State == Received) && e.seq == 0 {
		if p, ok := j.pending[e.key()]; ok {
			e.seq = p.seq
		} else {
			e.seq = j.nextSeq
			j.nextSeq++
		}
	}
	if e.Origin.IsPrompt() {
		j.trackState(e)
		return
	}
	id := e.key()
	if !j.recent[id] {
		j.recent[id] = true
		j.recentOrder = append(j.recentOrder, id)
		if len(j.recentOrder) > recentLimit {
			delete(j.recent, j.recentOrder[0])
			j.recentOrder = j.recentOrder[1:]
		}
	}
	if id > j.top.key() {
		j.top = Entry{Origin: e.Origin, State: Answered, At: e.At, seq: cmp.Or(e.seq, j.nextSeq)}
	}
	j.trackState(e)
}

// trackState keeps the pending entries in step with e.
func (j *Journal) trackState(e Entry) {
	id := e.key()
	switch {
	case e.State == Queued || e.State == Received:
		j.pending[id] = e
	case e.State == Answering:
		if p, ok := j.pending[id]; ok {
			p.State = Answering
			j.pending[id] = p
		}
	case e.State.finished():
		j.doneSince++
		delete(j.pending, id)
	}
}

// Done marks the entry o finished (nothing for no origin).
func (j *Journal) Done(o Origin) error { return j.mark(o, Answered) }

// Answering journals the entry o as answered, its answer about to be sent
// (nothing for no origin). It enforces the durability rule: a mark that
// cannot be journaled withholds the answer. The journal keeps a mark it
// could not write, and writes it once it can, but until then a kill would
// lose it: when Answering returns an error, the answer must not go out.
func (j *Journal) Answering(o Origin) error { return j.mark(o, Answering) }

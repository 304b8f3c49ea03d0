package chat

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"
)

// JournalFile is the inbound journal in the agent dir: every message that
// starts a turn is written (and fsync'd) here before its update is
// acknowledged to Telegram, and marked done when its turn ends.
const JournalFile = "inbound.jsonl"

// Journal entry states.
const (
	statePending     = "pending"
	stateDone        = "done"
	stateInterrupted = "interrupted"
)

// updateRetention is how long Telegram keeps an update it has not been
// told was received; a journal older than this has nothing left to be
// delivered twice.
const updateRetention = 24 * time.Hour

// journalEntry is one line of the journal. The last line about an id wins.
type journalEntry struct {
	ID     int64           `json:"id"`
	State  string          `json:"state"`
	Scope  string          `json:"scope,omitempty"`
	Update json.RawMessage `json:"update,omitempty"`
	// At is when the update was journaled (Unix seconds).
	At int64 `json:"at,omitempty"`
}

// journal is the append-only inbound journal.
type journal struct {
	path string
	mu   sync.Mutex
	f    *os.File
	// interrupted holds, per scope, the latest message whose turn a crash
	// or a restart cut short, for /retry.
	interrupted map[string]journalEntry
	// fresh lists the entries found pending at start-up, to report.
	fresh []journalEntry
	// known holds the update ids the journal held at start-up: a
	// re-delivery of one of them (the bot died before acknowledging it) is
	// skipped.
	known map[int64]bool
	// lastID is the highest update id journaled before start-up, and
	// lastAt when it was journaled; polling starts after it.
	lastID int64
	lastAt time.Time
}

// openJournal reads the journal, turns every entry still pending into an
// interrupted one, compacts the file to those, and opens it for appending.
func openJournal(dir string) (*journal, error) {
	j := &journal{path: filepath.Join(dir, JournalFile), interrupted: map[string]journalEntry{}, known: map[int64]bool{}}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	data, err := os.ReadFile(j.path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("journal %s: %w", j.path, err)
	}
	states := map[int64]journalEntry{}
	var order []int64
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 64*1024*1024)
	for sc.Scan() {
		var e journalEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.ID == 0 {
			continue // a line torn by a crash
		}
		prev, seen := states[e.ID]
		if !seen {
			order = append(order, e.ID)
		}
		if e.Update == nil {
			e.Update, e.Scope = prev.Update, prev.Scope
		}
		if e.At == 0 {
			e.At = prev.At
		}
		states[e.ID] = e
		j.known[e.ID] = true
		if e.ID >= j.lastID {
			j.lastID = e.ID
			if e.At != 0 {
				j.lastAt = time.Unix(e.At, 0)
			}
		}
	}
	var keep []journalEntry
	for _, id := range order {
		e := states[id]
		switch e.State {
		case statePending:
			j.fresh = append(j.fresh, e)
		case stateInterrupted:
		default:
			continue
		}
		if e.Update == nil || e.Scope == "" {
			continue
		}
		e.State = stateInterrupted
		j.interrupted[e.Scope] = e
	}
	for _, e := range j.interrupted {
		keep = append(keep, e)
	}
	// The highest id stays in the file (as done, when nothing else keeps
	// it), so the next start-up still knows where polling stopped.
	if j.lastID != 0 && !slices.ContainsFunc(keep, func(e journalEntry) bool { return e.ID == j.lastID }) {
		keep = append(keep, journalEntry{ID: j.lastID, State: stateDone, At: states[j.lastID].At})
	}
	slices.SortFunc(keep, func(a, b journalEntry) int { return cmp.Compare(a.ID, b.ID) })
	var buf bytes.Buffer
	for _, e := range keep {
		line, _ := json.Marshal(e)
		buf.Write(append(line, '\n'))
	}
	if err := writeFileAtomic(j.path, buf.Bytes()); err != nil {
		return nil, fmt.Errorf("journal %s: %w", j.path, err)
	}
	if j.f, err = os.OpenFile(j.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600); err != nil {
		return nil, fmt.Errorf("journal: %w", err)
	}
	return j, nil
}

// write appends entries and fsyncs the file once.
func (j *journal) write(entries ...journalEntry) error {
	if len(entries) == 0 {
		return nil
	}
	var buf bytes.Buffer
	for _, e := range entries {
		line, err := json.Marshal(e)
		if err != nil {
			return fmt.Errorf("journal: %w", err)
		}
		buf.Write(append(line, '\n'))
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return errors.New("journal: closed")
	}
	if _, err := j.f.Write(buf.Bytes()); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	if err := j.f.Sync(); err != nil {
		return fmt.Errorf("journal: %w", err)
	}
	return nil
}

// done marks the entry id as finished.
func (j *journal) done(id int64) error {
	if id == 0 {
		return nil
	}
	return j.write(journalEntry{ID: id, State: stateDone})
}

// seen reports whether update id was in the journal at start-up.
func (j *journal) seen(id int64) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.known[id]
}

// resumeOffset returns the getUpdates offset polling starts from: after
// the highest journaled update, so an update journaled but never
// acknowledged is not delivered again. It is 0 (Telegram's own position)
// when the journal is empty or older than Telegram keeps updates: update
// ids may restart lower after a long pause, and a stale offset would
// discard new updates.
func (j *journal) resumeOffset(now time.Time) int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.lastID == 0 || j.lastAt.IsZero() || now.Sub(j.lastAt) > updateRetention {
		return 0
	}
	return j.lastID + 1
}

// takeInterrupted removes and returns scope's interrupted message.
func (j *journal) takeInterrupted(scope string) (journalEntry, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	e, ok := j.interrupted[scope]
	delete(j.interrupted, scope)
	return e, ok
}

// reported returns the entries found pending at start-up, once.
func (j *journal) reported() []journalEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := j.fresh
	j.fresh = nil
	return out
}

func (j *journal) close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f != nil {
		j.f.Close()
		j.f = nil
	}
}

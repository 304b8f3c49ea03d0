package chat

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/volcanic/telegram-agent/internal/atomicfile"
)

// JournalFile is the inbound journal in the agent dir: every message that
// starts a turn is written (and fsync'd) here before its update is
// acknowledged to Telegram, and marked done when its turn ends; every
// command and button press too, done once handled.
const JournalFile = "inbound.jsonl"

// Journal entry states.
const (
	statePending     = "pending"
	stateDone        = "done"
	stateInterrupted = "interrupted"
	// stateAnswering marks an entry whose turn finished and whose answer is
	// being sent (see markAnswered).
	stateAnswering = "answering"
	// stateReceived marks an update that starts no turn (a command, a
	// button press) taken but not handled yet: it is done once handled
	// and its replies went out. One found received at start-up is handled
	// then (see replay): the bot died before that, maybe after Telegram
	// was told the update arrived.
	stateReceived = "received"
)

// updateRetention is how long Telegram keeps an update it has not been
// told was received; a journal older than this has nothing left to be
// delivered twice.
const updateRetention = 24 * time.Hour

// journalEntry is one line of the journal. The last line about an id wins.
//
// An entry with a negative id is a scheduled prompt (see
// journal.writePrompt), not a Telegram update: it carries the prompt's
// label and text, for the report and /retry, instead of an update, and it
// never counts for the polling offset nor for the dedupe of update ids
// (Telegram's update ids are positive).
type journalEntry struct {
	ID     int64           `json:"id"`
	State  string          `json:"state"`
	Scope  string          `json:"scope,omitempty"`
	Update json.RawMessage `json:"update,omitempty"`
	// Label and Prompt are a scheduled prompt's label and text.
	Label  string `json:"label,omitempty"`
	Prompt string `json:"prompt,omitempty"`
	// At is when the update was journaled (Unix seconds).
	At int64 `json:"at,omitempty"`
	// seq is the order the entry came in (its first line's place in the
	// file, then the order it was written since start-up): interrupted
	// messages and prompts are reported and retried in that order, and a
	// compaction writes the file in it, so that the next start-up reads
	// the same order back.
	seq int64
}

// isPrompt reports whether e is a scheduled prompt's entry.
func (e journalEntry) isPrompt() bool { return e.ID < 0 }

// retryable reports whether e holds what its report and /retry need: a
// scope, and an update or a prompt.
func (e journalEntry) retryable() bool {
	return e.Scope != "" && (e.Update != nil || e.isPrompt())
}

// bySeq orders entries as they came.
func bySeq(a, b journalEntry) int {
	return cmp.Or(cmp.Compare(a.seq, b.seq), cmp.Compare(a.ID, b.ID))
}

// Compaction thresholds: the journal is rewritten to its live entries
// once this many entries were marked done, or once the file grew this
// much, since it was last compacted.
const (
	compactAfterDone  = 1000
	compactAfterBytes = 4 << 20
)

// recentLimit bounds the update ids a running journal remembers; a
// re-delivery is of a recent update.
const recentLimit = 4096

// journal is the append-only inbound journal.
type journal struct {
	path   string
	logger *slog.Logger
	mu     sync.Mutex
	log    *atomicfile.Log
	closed bool
	// interrupted holds, per scope, every message whose turn a crash or a
	// restart cut short (the one running and the ones queued behind it), in
	// order of id, for /retry: each is reported and retried on its own. An
	// entry stays pending (in the file too) until its report was sent, so
	// that a crash or a Telegram failure before that reports it again.
	interrupted map[string][]journalEntry
	// fresh lists the entries found pending at start-up, to report.
	fresh []journalEntry
	// cut lists the entries found answering at start-up: their answer was
	// being sent when the bot died, so it may have been cut short. Until
	// the chat was told (markCutReported), unreported keeps them in the
	// file, answering, to be told after the next start-up otherwise.
	cut        []journalEntry
	unreported map[int64]journalEntry
	// known holds the update ids the journal held at start-up: a
	// re-delivery of one of them (the bot died before acknowledging it) is
	// skipped.
	known map[int64]bool
	// recent holds the last recentLimit update ids journaled since
	// start-up, oldest first in recentOrder: Telegram may deliver an update
	// again (twice in one answer, or a webhook delivery it retries), and
	// the copy must not run a second turn.
	recent      map[int64]bool
	recentOrder []int64
	// lastID is the highest update id journaled before start-up, and
	// lastAt when it was journaled; polling starts after it.
	lastID int64
	lastAt time.Time
	// replays lists the entries found received at start-up, to handle.
	replays []journalEntry
	// nextSeq is the seq of the next entry that comes in; lowest is the
	// lowest (scheduled prompt) id the journal holds or handed out.
	nextSeq, lowest int64

	// pending holds the entries written since start-up that are not done
	// yet; top is the highest id written (and its time), kept by a
	// compaction so that the next start-up knows where polling stopped.
	pending map[int64]journalEntry
	top     journalEntry
	// doneSince counts the entries marked done since the last compaction,
	// and compactedAt is the file's size after it; compactDone and
	// compactBytes are the thresholds.
	doneSince                 int
	compactedAt               int64
	compactDone, compactBytes int
	// unsynced are the state changes (answering, done) whose append
	// failed (a full disk): they count in memory already, and are written
	// before the next entries, by flush, or by the next compaction.
	unsynced []journalEntry
	// compactPending reports that the start-up compaction failed: flush
	// tries it again.
	compactPending bool
	// hook, when set (tests), runs with the journal locked just before
	// and just after each write of the file (an append, a compaction):
	// a crash-point test stops the world there, as a SIGKILL would.
	hook func(written bool)
}

// journalOption configures a journal: the test seams.
type journalOption func(*journal)

// openJournal reads the journal, turns every entry still pending into an
// interrupted one, compacts the file to those, and opens it for appending.
// A compaction that fails (a full disk) is logged and tried again later
// (see flush).
// A line that does not parse stops it with the path and the line number,
// and the file is left as it is, except for a torn last line (see
// atomicfile.OpenLog).
func openJournal(dir string, logger *slog.Logger, opts ...journalOption) (*journal, error) {
	j := &journal{
		path: filepath.Join(dir, JournalFile), logger: logger, interrupted: map[string][]journalEntry{}, known: map[int64]bool{}, recent: map[int64]bool{},
		unreported: map[int64]journalEntry{},
		pending:    map[int64]journalEntry{}, compactDone: compactAfterDone, compactBytes: compactAfterBytes,
	}
	for _, o := range opts {
		o(j)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("chat: journal: %w", err)
	}
	states := map[int64]journalEntry{}
	var order []int64
	each := func(_ int, line []byte) error {
		var e journalEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return err
		}
		if e.ID == 0 {
			return errors.New("no update id")
		}
		prev, seen := states[e.ID]
		if !seen {
			order = append(order, e.ID)
			prev.seq = int64(len(order))
		}
		// A line with neither an update nor a scope only changes the
		// state: what the entry is comes from its first line. (A
		// prompt's text may be empty, and omitted from its line.)
		if e.Update == nil && e.Scope == "" {
			e.Update, e.Scope, e.Label, e.Prompt = prev.Update, prev.Scope, prev.Label, prev.Prompt
		}
		if e.At == 0 {
			e.At = prev.At
		}
		e.seq = prev.seq
		states[e.ID] = e
		if e.isPrompt() {
			// A scheduled prompt's id is no update id: it moves neither
			// the polling offset nor the dedupe.
			j.lowest = min(j.lowest, e.ID)
			return nil
		}
		j.known[e.ID] = true
		if e.ID >= j.lastID {
			j.lastID = e.ID
			if e.At != 0 {
				j.lastAt = time.Unix(e.At, 0)
			}
		}
		return nil
	}
	log, err := atomicfile.OpenLog(j.path, 0o600, logger, each)
	if err != nil {
		return nil, fmt.Errorf("chat: journal (fix or remove the file): %w", err)
	}
	j.log = log
	j.nextSeq = int64(len(order)) + 1
	for _, id := range order {
		e := states[id]
		switch e.State {
		case stateAnswering:
			if e.retryable() {
				j.cut = append(j.cut, e)
				j.unreported[e.ID] = e
			}
			continue
		case statePending:
			j.fresh = append(j.fresh, e)
		case stateInterrupted:
		case stateReceived:
			// Kept until it was handled; one older than Telegram keeps
			// updates is stale (a command of yesterday is not run now).
			if e.Update != nil && e.At != 0 && time.Since(time.Unix(e.At, 0)) <= updateRetention {
				j.pending[e.ID] = e
				j.replays = append(j.replays, e)
			}
			continue
		default:
			continue
		}
		if !e.retryable() {
			continue
		}
		j.interrupted[e.Scope] = append(j.interrupted[e.Scope], e)
	}
	if j.lastID != 0 {
		j.top = journalEntry{ID: j.lastID, State: stateDone, At: states[j.lastID].At, seq: states[j.lastID].seq}
	}
	if err := j.rewriteLocked(); err != nil {
		// A full disk must not keep the bot from starting: it could not
		// take messages, but it can tell the chats and turn unhealthy,
		// and carry on once space is freed. The file stays as it was
		// (its pending entries are interrupted ones in memory), and the
		// compaction is tried again by flush.
		logger.Warn("the inbound journal could not be compacted at start-up; it is tried again once the agent dir can be written", "err", err)
		j.compactPending = true
	}
	return j, nil
}

// liveLocked returns what a compacted journal holds: the interrupted
// messages and prompts (for /retry), the pending ones and the highest
// update id (as done, when nothing else keeps it), in the order they came.
func (j *journal) liveLocked() []journalEntry {
	live := make(map[int64]journalEntry, len(j.interrupted)+len(j.pending)+len(j.unreported)+1)
	for _, es := range j.interrupted {
		for _, e := range es {
			live[e.ID] = e
		}
	}
	for _, e := range j.unreported {
		live[e.ID] = e
	}
	for _, e := range j.pending {
		live[e.ID] = e
	}
	if _, kept := live[j.top.ID]; j.top.ID != 0 && !kept {
		live[j.top.ID] = j.top
	}
	keep := slices.Collect(maps.Values(live))
	slices.SortFunc(keep, bySeq)
	return keep
}

// rewriteLocked replaces the file with its live entries, atomically.
func (j *journal) rewriteLocked() error {
	live := j.liveLocked()
	entries := make([]any, len(live))
	for i, e := range live {
		entries[i] = e
	}
	j.hooked(false)
	if err := j.log.Rewrite(entries...); err != nil {
		return fmt.Errorf("chat: journal: %w", err)
	}
	j.hooked(true)
	j.doneSince, j.compactedAt, j.unsynced, j.compactPending = 0, j.log.Size(), nil, false
	return nil
}

// write appends entries and fsyncs the file once; past the thresholds it
// then compacts the file. The state changes that could not be written
// before go first. When the append fails nothing of entries counts: the
// caller does not acknowledge their updates.
func (j *journal) write(entries ...journalEntry) error {
	if len(entries) == 0 {
		return nil
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.appendLocked(entries)
}

func (j *journal) appendLocked(entries []journalEntry) error {
	if j.closed {
		return errors.New("chat: journal: closed")
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
		return fmt.Errorf("chat: journal: %w", err)
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
func (j *journal) hooked(written bool) {
	if j.hook != nil {
		j.hook(written)
	}
}

// mark appends the state change e. When that fails (a full disk) e still
// counts in memory, and is written later (see unsynced): a message whose
// answer was delivered while the disk was full must not be reported as
// interrupted after the next restart.
func (j *journal) mark(e journalEntry) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.markLocked(e)
}

// markLocked is mark with j.mu held.
func (j *journal) markLocked(e journalEntry) error {
	err := j.appendLocked([]journalEntry{e})
	if err != nil && !j.closed {
		j.track(e)
		j.unsynced = append(j.unsynced, e)
	}
	return err
}

// flush writes the state changes that could not be written before, and
// the start-up compaction that could not be, if any.
func (j *journal) flush() error {
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
func (j *journal) track(e journalEntry) {
	if (e.State == statePending || e.State == stateReceived) && e.seq == 0 {
		if p, ok := j.pending[e.ID]; ok {
			e.seq = p.seq
		} else {
			e.seq = j.nextSeq
			j.nextSeq++
		}
	}
	if e.isPrompt() {
		j.trackState(e)
		return
	}
	if !j.recent[e.ID] {
		j.recent[e.ID] = true
		j.recentOrder = append(j.recentOrder, e.ID)
		if len(j.recentOrder) > recentLimit {
			delete(j.recent, j.recentOrder[0])
			j.recentOrder = j.recentOrder[1:]
		}
	}
	if e.ID > j.top.ID {
		j.top = journalEntry{ID: e.ID, State: stateDone, At: e.At, seq: cmp.Or(e.seq, j.nextSeq)}
	}
	j.trackState(e)
}

// trackState keeps the pending entries in step with e.
func (j *journal) trackState(e journalEntry) {
	switch e.State {
	case statePending, stateReceived:
		j.pending[e.ID] = e
	case stateAnswering:
		if p, ok := j.pending[e.ID]; ok {
			p.State = stateAnswering
			j.pending[e.ID] = p
		}
	case stateDone:
		j.doneSince++
		delete(j.pending, e.ID)
	}
}

// writePrompt journals a scheduled prompt for scope, pending, and returns
// its id: negative, below every id the journal holds or handed out, so
// that it never meets a Telegram update id (those are positive) nor an
// earlier prompt's entry. The id follows the clock (in nanoseconds) when
// it can, so that ids stay apart across restarts too. When the append
// fails nothing is journaled.
func (j *journal) writePrompt(scope, label, prompt string) (int64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	id := min(-time.Now().UnixNano(), j.lowest-1)
	j.lowest = id
	e := journalEntry{ID: id, State: statePending, Scope: scope, Label: label, Prompt: prompt, At: time.Now().Unix()}
	if err := j.appendLocked([]journalEntry{e}); err != nil {
		return 0, err
	}
	return id, nil
}

// done marks the entry id as finished.
func (j *journal) done(id int64) error {
	if id == 0 {
		return nil
	}
	return j.mark(journalEntry{ID: id, State: stateDone})
}

// seen reports whether update id was in the journal at start-up or was
// journaled since (among the last recentLimit).
func (j *journal) seen(id int64) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.known[id] || j.recent[id]
}

// replay returns the entries found received at start-up, once: updates
// taken but not handled when the bot died.
func (j *journal) replay() []journalEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := j.replays
	j.replays = nil
	return out
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

// takeInterrupted removes and returns scope's oldest interrupted messages
// and prompts, at most limit of them (all when limit < 0), in the order
// they came, and how many
// are left: each is handed out once.
func (j *journal) takeInterrupted(scope string, limit int) (taken []journalEntry, left int) {
	j.mu.Lock()
	defer j.mu.Unlock()
	es := j.interrupted[scope]
	if limit < 0 || limit >= len(es) {
		delete(j.interrupted, scope)
		return es, 0
	}
	j.interrupted[scope] = slices.Clone(es[limit:])
	return es[:limit], len(es) - limit
}

// putBack returns entries, which takeInterrupted handed out, to scope's
// interrupted messages: /retry could not take them after all.
func (j *journal) putBack(scope string, entries []journalEntry) {
	if len(entries) == 0 {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	es := append(slices.Clone(entries), j.interrupted[scope]...)
	slices.SortFunc(es, bySeq)
	j.interrupted[scope] = slices.CompactFunc(es, func(a, b journalEntry) bool { return a.ID == b.ID })
}

// reported returns the entries found pending at start-up, once.
func (j *journal) reported() []journalEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := j.fresh
	j.fresh = nil
	return out
}

// markReported records that the chat was told that the interrupted
// message id was cut short: it stays retryable, and is not reported again
// after the next start-up. It does nothing when /retry took the message
// already (it is pending again, its own turn's to finish).
func (j *journal) markReported(scope string, id int64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	es := j.interrupted[scope]
	i := slices.IndexFunc(es, func(e journalEntry) bool { return e.ID == id })
	if i < 0 || es[i].State == stateInterrupted {
		return nil
	}
	es[i].State = stateInterrupted
	e := journalEntry{ID: id, State: stateInterrupted}
	return j.markLocked(e)
}

// unreportedInterrupted reports whether the interrupted message id of
// scope still waits for its report: not reported yet, nor taken by
// /retry.
func (j *journal) unreportedInterrupted(scope string, id int64) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	i := slices.IndexFunc(j.interrupted[scope], func(e journalEntry) bool { return e.ID == id })
	return i >= 0 && j.interrupted[scope][i].State != stateInterrupted
}

// markCutReported records that the chat was told that the answer to id
// may have been cut short: the entry is done.
func (j *journal) markCutReported(id int64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.unreported[id]; !ok {
		return nil
	}
	delete(j.unreported, id)
	e := journalEntry{ID: id, State: stateDone}
	return j.markLocked(e)
}

// cutShort returns the entries found answering at start-up, once.
func (j *journal) cutShort() []journalEntry {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := j.cut
	j.cut = nil
	return out
}

// answering marks the entry id as answered, its answer about to be sent.
func (j *journal) answering(id int64) error {
	if id == 0 {
		return nil
	}
	return j.mark(journalEntry{ID: id, State: stateAnswering})
}

func (j *journal) close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.closed {
		j.log.Close()
		j.closed = true
	}
}

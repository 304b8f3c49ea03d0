package ledger

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/volcanic/telegram-agent/internal/atomicfile"
)

// File is the inbound journal in the agent dir: every message that starts
// a turn is written (and fsync'd) here before its update is acknowledged
// to Telegram, and marked done when its turn ends; every command and
// button press too, done once handled.
const File = "inbound.jsonl"

// updateRetention is how long Telegram keeps an update it has not been
// told was received; a journal older than this has nothing left to be
// delivered twice.
const updateRetention = 24 * time.Hour

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

// Journal is the append-only inbound journal. Its maps are keyed by the
// entries' ids in the file (Origin.key).
type Journal struct {
	path   string
	logger *slog.Logger
	mu     sync.Mutex
	log    *atomicfile.Log
	closed bool
	// interrupted holds, per scope, every message whose turn a crash or a
	// restart cut short (the one running and the ones queued behind it), in
	// order, for /retry: each is reported and retried on its own. An entry
	// stays pending (in the file too) until its report was sent, so that a
	// crash or a Telegram failure before that reports it again.
	interrupted map[string][]Entry
	// fresh lists the entries found pending at start-up, to report.
	fresh []Entry
	// cut lists the entries found answering at start-up: their answer was
	// being sent when the bot died, so it may have been cut short. Until
	// the chat was told (MarkCutReported), unreported keeps them in the
	// file, answering, to be told after the next start-up otherwise.
	cut        []Entry
	unreported map[int64]Entry
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
	replays []Entry
	// nextSeq is the seq of the next entry that comes in; lowest is the
	// lowest (scheduled prompt) id the journal holds or handed out.
	nextSeq, lowest int64

	// pending holds the entries written since start-up that are not done
	// yet; top is the highest update id written (and its time), kept by a
	// compaction so that the next start-up knows where polling stopped.
	pending map[int64]Entry
	top     Entry
	// doneSince counts the entries marked done since the last compaction,
	// and compactedAt is the file's size after it; compactDone and
	// compactBytes are the thresholds.
	doneSince                 int
	compactedAt               int64
	compactDone, compactBytes int
	// unsynced are the state changes (answering, done) whose append
	// failed (a full disk): they count in memory already, and are written
	// before the next entries, by Flush, or by the next compaction.
	unsynced []Entry
	// compactPending reports that the start-up compaction failed: Flush
	// tries it again.
	compactPending bool
	// hook, when set (tests), runs with the journal locked just before
	// and just after each write of the file (an append, a compaction):
	// a crash-point test stops the world there, as a SIGKILL would.
	hook func(written bool)
}

// Option configures a Journal: the test seams.
type Option func(*Journal)

// WithHook sets a hook run with the journal locked just before and just
// after each write of its file (an append, a compaction), so that a
// crash-point test can stop the world there, as a SIGKILL would.
func WithHook(f func(written bool)) Option { return func(j *Journal) { j.hook = f } }

// CompactAfter compacts the journal once n entries were marked done
// (default 1000), so that a test sees compactions.
func CompactAfter(n int) Option { return func(j *Journal) { j.compactDone = n } }

// Open reads the journal in dir, turns every entry still pending into an
// interrupted one, compacts the file to those, and opens it for appending.
// A compaction that fails (a full disk) is logged and tried again later
// (see Flush). A line that does not parse stops it with the path and the
// line number, and the file is left as it is, except for a torn last line
// (see atomicfile.OpenLog).
func Open(dir string, logger *slog.Logger, opts ...Option) (*Journal, error) {
	j := &Journal{
		path: filepath.Join(dir, File), logger: logger, interrupted: map[string][]Entry{}, known: map[int64]bool{}, recent: map[int64]bool{},
		unreported: map[int64]Entry{},
		pending:    map[int64]Entry{}, compactDone: compactAfterDone, compactBytes: compactAfterBytes,
	}
	for _, o := range opts {
		o(j)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("ledger: journal: %w", err)
	}
	states := map[int64]Entry{}
	var order []int64
	each := func(_ int, line []byte) error {
		var e Entry
		if err := json.Unmarshal(line, &e); err != nil {
			return err
		}
		id := e.key()
		if id == 0 {
			return errors.New("no update id")
		}
		prev, seen := states[id]
		if !seen {
			order = append(order, id)
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
		states[id] = e
		if e.Origin.IsPrompt() {
			// A scheduled prompt's id is no update id: it moves neither
			// the polling offset nor the dedupe.
			j.lowest = min(j.lowest, id)
			return nil
		}
		j.known[id] = true
		if id >= j.lastID {
			j.lastID = id
			if e.At != 0 {
				j.lastAt = time.Unix(e.At, 0)
			}
		}
		return nil
	}
	log, err := atomicfile.OpenLog(j.path, 0o600, logger, each)
	if err != nil {
		return nil, fmt.Errorf("ledger: journal (fix or remove the file): %w", err)
	}
	j.log = log
	j.nextSeq = int64(len(order)) + 1
	for _, id := range order {
		j.load(states[id])
	}
	if j.lastID != 0 {
		j.top = Entry{Origin: Update(j.lastID), State: Answered, At: states[j.lastID].At, seq: states[j.lastID].seq}
	}
	if err := j.rewriteLocked(); err != nil {
		// A full disk must not keep the bot from starting: it could not
		// take messages, but it can tell the chats and turn unhealthy,
		// and carry on once space is freed. The file stays as it was
		// (its pending entries are interrupted ones in memory), and the
		// compaction is tried again by Flush.
		logger.Warn("the inbound journal could not be compacted at start-up; it is tried again once the agent dir can be written", "err", err)
		j.compactPending = true
	}
	return j, nil
}

// load sorts the entry e found at start-up into what is handed out: a
// queued one was interrupted, an answering one may have been cut short, a
// received one is handled again, a reported one waits for /retry.
func (j *Journal) load(e Entry) {
	switch e.State {
	case Answering:
		if e.retryable() {
			j.cut = append(j.cut, e)
			j.unreported[e.key()] = e
		}
		return
	case Queued:
		e.State = Interrupted
		j.fresh = append(j.fresh, e)
	case Reported:
	case Received:
		// Kept until it was handled; one older than Telegram keeps
		// updates is stale (a command of yesterday is not run now).
		if e.Update != nil && e.At != 0 && time.Since(time.Unix(e.At, 0)) <= updateRetention {
			j.pending[e.key()] = e
			j.replays = append(j.replays, e)
		}
		return
	default:
		return
	}
	if e.retryable() {
		j.interrupted[e.Scope] = append(j.interrupted[e.Scope], e)
	}
}

// Unfinished counts the entries written since start-up that are not done
// yet.
func (j *Journal) Unfinished() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return len(j.pending)
}

// Close closes the file; a write after it fails.
func (j *Journal) Close() {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.closed {
		j.log.Close()
		j.closed = true
	}
}

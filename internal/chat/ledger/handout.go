package ledger

import (
	"slices"
	"sort"
	"time"
)

// The journal's answers to the host: what polling resumes from and skips,
// and the entries a start-up found unfinished, each handed out once.

// WritePrompt journals a scheduled prompt for scope, queued, and returns
// its origin. Its id in the file is negative, below every id the journal
// holds or handed out, so that it never meets a Telegram update id (those
// are positive) nor an earlier prompt's entry; it follows the clock (in
// nanoseconds) when it can, so that ids stay apart across restarts too.
// When the append fails nothing is journaled.
func (j *Journal) WritePrompt(scope, label, prompt string) (Origin, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	id := min(-time.Now().UnixNano(), j.lowest-1)
	j.lowest = id
	e := Entry{Origin: originOf(id), State: Queued, Scope: scope, Label: label, Prompt: prompt, At: time.Now().Unix()}
	if err := j.appendLocked([]Entry{e}); err != nil {
		return Origin{}, err
	}
	return e.Origin, nil
}

// Seen reports whether update id was in the journal at start-up or was
// journaled since (among the last recentLimit).
func (j *Journal) Seen(id int64) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.known[id] || j.recent[id]
}

// ResumeOffset returns the getUpdates offset polling starts from: after
// the highest journaled update, so an update journaled but never
// acknowledged is not delivered again. It is 0 (Telegram's own position)
// when the journal is empty or older than Telegram keeps updates: update
// ids may restart lower after a long pause, and a stale offset would
// discard new updates.
func (j *Journal) ResumeOffset(now time.Time) int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.lastID == 0 || j.lastAt.IsZero() || now.Sub(j.lastAt) > updateRetention {
		return 0
	}
	return j.lastID + 1
}

// Replay returns the entries found received at start-up, once: updates
// taken but not handled when the bot died.
func (j *Journal) Replay() []Entry {
	return j.once(&j.replays)
}

// ToReport returns the entries found queued at start-up, once: interrupted,
// the chat is to be told (MarkReported once it was).
func (j *Journal) ToReport() []Entry {
	return j.once(&j.fresh)
}

// CutShort returns the entries found answering at start-up, once: the
// chat is to be told that their answer may have been cut short
// (MarkCutReported once it was).
func (j *Journal) CutShort() []Entry {
	return j.once(&j.cut)
}

// once empties list and returns what it held, with the journal locked.
func (j *Journal) once(list *[]Entry) []Entry {
	j.mu.Lock()
	defer j.mu.Unlock()
	out := *list
	*list = nil
	return out
}

// TakeInterrupted removes and returns scope's oldest interrupted messages
// and prompts, at most limit of them (all when limit < 0), in the order
// they came, and how many are left: each is handed out once.
func (j *Journal) TakeInterrupted(scope string, limit int) (taken []Entry, left int) {
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

// PutBack returns entries, which TakeInterrupted handed out, to scope's
// interrupted messages: /retry could not take them after all.
func (j *Journal) PutBack(scope string, entries []Entry) {
	if len(entries) == 0 {
		return
	}
	j.mu.Lock()
	defer j.mu.Unlock()
	es := append(slices.Clone(entries), j.interrupted[scope]...)
	sort.Slice(es, func(i, j int) bool { return bySeq(es[i], es[j]) < 0 })
	j.interrupted[scope] = slices.CompactFunc(es, func(a, b Entry) bool { return a.Origin == b.Origin })
}

// indexLocked returns where o stands among scope's interrupted entries,
// -1 when /retry took it.
func (j *Journal) indexLocked(scope string, o Origin) int {
	return slices.IndexFunc(j.interrupted[scope], func(e Entry) bool { return e.Origin == o })
}

// MarkReported records that the chat was told that the interrupted item o
// was cut short: it stays retryable, and is not reported again after the
// next start-up. It does nothing when /retry took it already (it is
// queued again, its own turn's to finish).
func (j *Journal) MarkReported(scope string, o Origin) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	i := j.indexLocked(scope, o)
	if i < 0 || j.interrupted[scope][i].State == Reported {
		return nil
	}
	j.interrupted[scope][i].State = Reported
	return j.markLocked(Entry{Origin: o, State: Reported})
}

// Unreported reports whether the interrupted item o of scope still waits
// for its report: not reported yet, nor taken by /retry.
func (j *Journal) Unreported(scope string, o Origin) bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	i := j.indexLocked(scope, o)
	return i >= 0 && j.interrupted[scope][i].State != Reported
}

// MarkCutReported records that the chat was told that the answer to o may
// have been cut short: the entry is done.
func (j *Journal) MarkCutReported(o Origin) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if _, ok := j.unreported[o.key()]; !ok {
		return nil
	}
	delete(j.unreported, o.key())
	return j.markLocked(Entry{Origin: o, State: Answered})
}

package ledger

import (
	"cmp"
	"encoding/json"
	"errors"
)

// Entry is one inbound item as the journal holds it. In the file it is a
// line; the last line about an origin wins, and a line with neither an
// update nor a scope only changes the state (what the entry is comes from
// its first line).
type Entry struct {
	Origin Origin
	State  State
	// Scope is the chat the item belongs to (a turn's, a prompt's).
	Scope string
	// Update is the Telegram update as it came, for the report and /retry.
	Update json.RawMessage
	// Label and Prompt are a scheduled prompt's label and text.
	Label, Prompt string
	// At is when the item was journaled (Unix seconds).
	At int64
	// seq is the order the entry came in (its first line's place in the
	// file, then the order it was written since start-up): interrupted
	// messages and prompts are reported and retried in that order, and a
	// compaction writes the file in it, so that the next start-up reads
	// the same order back.
	seq int64
}

// line is an entry's encoding in the file, as every version wrote it: a
// scheduled prompt's id is negative, its state a word.
type line struct {
	ID     int64           `json:"id"`
	State  string          `json:"state"`
	Scope  string          `json:"scope,omitempty"`
	Update json.RawMessage `json:"update,omitempty"`
	Label  string          `json:"label,omitempty"`
	Prompt string          `json:"prompt,omitempty"`
	At     int64           `json:"at,omitempty"`
}

// MarshalJSON writes e as a line of the file.
func (e Entry) MarshalJSON() ([]byte, error) {
	word, ok := onDisk[e.State]
	if !ok {
		return nil, errors.New("ledger: an entry without a state")
	}
	return json.Marshal(line{ID: e.Origin.key(), State: word, Scope: e.Scope, Update: e.Update, Label: e.Label, Prompt: e.Prompt, At: e.At})
}

// UnmarshalJSON reads a line of the file; a state word this version does
// not know reads as the zero State.
func (e *Entry) UnmarshalJSON(data []byte) error {
	var l line
	if err := json.Unmarshal(data, &l); err != nil {
		return err
	}
	*e = Entry{Origin: originOf(l.ID), State: fromDisk(l.State), Scope: l.Scope, Update: l.Update, Label: l.Label, Prompt: l.Prompt, At: l.At}
	return nil
}

// retryable reports whether e holds what its report and /retry need: a
// scope, and an update or a prompt.
func (e Entry) retryable() bool {
	return e.Scope != "" && (e.Update != nil || e.Origin.IsPrompt())
}

// key is e's id in the file.
func (e Entry) key() int64 { return e.Origin.key() }

// bySeq orders entries as they came.
func bySeq(a, b Entry) int {
	return cmp.Or(cmp.Compare(a.seq, b.seq), cmp.Compare(a.key(), b.key()))
}

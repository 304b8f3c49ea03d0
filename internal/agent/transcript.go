package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/volcanic/telegram-agent/internal/atomicfile"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// Transcript entry types. Every line of a transcript is an envelope
// {"type": ..., ...}; "message" lines carry one Message; "compaction" lines
// record a compaction: the summary that stands for the conversation before
// the first kept message, which is the first_kept_user-th (from 0) user
// message of the transcript. Lines of other types (written by later
// versions) are skipped on load.
const (
	entryMessage    = "message"
	entryCompaction = "compaction"
)

// transcriptEntry is one line of a transcript file.
type transcriptEntry struct {
	Type    string   `json:"type"`
	Message *Message `json:"message,omitempty"`

	// The fields of a compaction entry. TokensBefore is the context's size
	// when it was compacted, for the record.
	Summary       string    `json:"summary,omitempty"`
	FirstKeptUser int       `json:"first_kept_user,omitempty"`
	Time          time.Time `json:"time,omitzero"`
	TokensBefore  int       `json:"tokens_before,omitempty"`
}

// entryLog is what a transcript needs of its file: an *atomicfile.Log, or
// in tests one whose appends fail.
type entryLog interface {
	Append(entries ...any) error
	Close() error
}

// transcript is a session's append-only JSONL file (an atomicfile.Log:
// every append is one write of whole lines, then fsync, and a failed one is
// cut away again).
type transcript struct {
	path string
	log  entryLog
	// red redacts every entry before it is written: what the model wrote
	// (its text, its tool calls' arguments) is stored like what leaves,
	// since the agent's processes may read the file back. Nil writes
	// entries as they are.
	red *redactor.Redactor
	// loaded is the last compaction the file recorded when it was opened.
	loaded compactionState
}

// openTranscript opens (creating it when missing) the transcript at path and
// loads its messages: those after its last compaction, which the returned
// transcript keeps as loaded. A last line cut off by a crash mid-write is
// logged, dropped and truncated away; any other line that does not parse
// stops loading with the path and line number.
func openTranscript(path string, logger *slog.Logger) (*transcript, []Message, error) {
	var (
		loaded   compactionState
		messages []Message
	)
	each := func(lineNo int, line []byte) error {
		var e transcriptEntry
		if err := checkEntry(json.Unmarshal(line, &e), e); err != nil {
			return err
		}
		switch e.Type {
		case entryMessage:
			messages = append(messages, *e.Message)
		case entryCompaction:
			cut, ok := userIndex(messages, e.FirstKeptUser-loaded.usersBefore)
			if !ok {
				return fmt.Errorf("the compaction keeps user message %d, which the transcript does not hold before it", e.FirstKeptUser)
			}
			messages = slices.Clone(messages[cut:])
			loaded = compactionState{summary: e.Summary, at: e.Time, usersBefore: e.FirstKeptUser}
		default:
			logger.Warn("agent: skipped a transcript entry of an unknown type", "path", path, "line", lineNo, "type", e.Type)
		}
		return nil
	}
	log, err := atomicfile.OpenLog(path, 0o600, logger, each)
	if err != nil {
		return nil, nil, fmt.Errorf("agent: transcript: %w", err)
	}
	return &transcript{path: path, log: log, loaded: loaded}, messages, nil
}

// checkEntry returns err, or what makes the decoded entry e unusable.
func checkEntry(err error, e transcriptEntry) error {
	switch {
	case err != nil:
		return err
	case e.Type == entryMessage && e.Message == nil:
		return errors.New("message entry without a message")
	case e.Type == entryCompaction && (e.Summary == "" || e.FirstKeptUser < 0):
		return errors.New("compaction entry without a summary or with a negative first_kept_user")
	}
	return nil
}

// userIndex returns the index of the n-th (from 0) user message of msgs, or
// len(msgs) when msgs holds exactly n; ok is false when n is out of range.
func userIndex(msgs []Message, n int) (i int, ok bool) {
	if n < 0 {
		return 0, false
	}
	for i, m := range msgs {
		if m.Role != RoleUser {
			continue
		}
		if n == 0 {
			return i, true
		}
		n--
	}
	return len(msgs), n == 0
}

// appendMessage writes m, redacted, as one line and syncs the file.
func (t *transcript) appendMessage(m Message) error {
	m = redactMessage(t.red, m)
	return t.appendEntry(transcriptEntry{Type: entryMessage, Message: &m})
}

// appendCompaction records a compaction of a context of tokensBefore
// tokens.
func (t *transcript) appendCompaction(c compactionState, tokensBefore int) error {
	return t.appendEntry(transcriptEntry{
		Type: entryCompaction, Summary: t.red.Redact(c.summary), FirstKeptUser: c.usersBefore,
		Time: c.at, TokensBefore: tokensBefore,
	})
}

// appendEntry writes e as one line and syncs the file.
func (t *transcript) appendEntry(e transcriptEntry) error {
	if err := t.log.Append(e); err != nil {
		return fmt.Errorf("agent: transcript: %w", err)
	}
	return nil
}

// close closes the file.
func (t *transcript) close() error { return t.log.Close() }

package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"slices"
	"time"
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

// transcriptFile is what a transcript needs of its file; *os.File
// satisfies it (tests inject failing writes through it).
type transcriptFile interface {
	Write(p []byte) (int, error)
	Sync() error
	Truncate(size int64) error
	Stat() (os.FileInfo, error)
	Close() error
}

// transcript is a session's append-only JSONL file. Every append is one
// write of a whole line, then fsync. An append that fails (a short write
// on a full disk, a failed fsync) is cut away again, so a torn line can only
// ever be the file's last one, which loading drops.
type transcript struct {
	path string
	f    transcriptFile
	// size is the length of the file's sound lines (-1 when unknown);
	// needNewline reports that they end without a newline; torn reports
	// bytes of a failed append after them that could not be cut away yet.
	size        int64
	needNewline bool
	torn        bool
	// loaded is the last compaction the file recorded when it was opened.
	loaded compactionState
}

// openTranscript opens (creating it when missing) the transcript at path and
// loads its messages: those after its last compaction, which the returned
// transcript keeps as loaded. A last line cut off by a crash mid-write (no newline,
// not JSON) is logged, dropped and truncated away; any other line that does
// not parse stops loading with the path and line number.
func openTranscript(path string, logger *slog.Logger) (*transcript, []Message, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("agent: reading transcript %s: %w", path, err)
	}
	loaded, messages, keep, needNewline, err := parseTranscript(path, data, logger)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return nil, nil, fmt.Errorf("agent: opening transcript: %w", err)
	}
	if keep < int64(len(data)) {
		if err := f.Truncate(keep); err != nil {
			f.Close()
			return nil, nil, fmt.Errorf("agent: dropping the torn last line of %s: %w", path, err)
		}
	}
	return &transcript{path: path, f: f, size: keep, needNewline: needNewline, loaded: loaded}, messages, nil
}

// parseTranscript parses a transcript's bytes into the last compaction and
// the messages after it. keep is how many bytes are sound (less than
// len(data) when a torn last line is dropped); needNewline reports a sound
// last line without its newline.
func parseTranscript(path string, data []byte, logger *slog.Logger) (loaded compactionState, messages []Message, keep int64, needNewline bool, err error) {
	offset := 0
	for lineNo := 1; offset < len(data); lineNo++ {
		end := bytes.IndexByte(data[offset:], '\n')
		last := end < 0
		if last {
			end = len(data) - offset
		}
		line := bytes.TrimSpace(data[offset : offset+end])
		start := offset
		offset += end + 1
		if len(line) == 0 {
			continue
		}
		var e transcriptEntry
		if perr := checkEntry(json.Unmarshal(line, &e), e); perr != nil {
			if last {
				logger.Warn("agent: dropped a torn last line of a transcript (the process stopped mid-write)",
					"path", path, "line", lineNo, "bytes", len(line))
				return loaded, messages, int64(start), false, nil
			}
			return compactionState{}, nil, 0, false, fmt.Errorf("agent: transcript %s line %d does not parse: %w", path, lineNo, perr)
		}
		switch e.Type {
		case entryMessage:
			messages = append(messages, *e.Message)
		case entryCompaction:
			cut, ok := userIndex(messages, e.FirstKeptUser-loaded.usersBefore)
			if !ok {
				return compactionState{}, nil, 0, false, fmt.Errorf("agent: transcript %s line %d: the compaction keeps user message %d, which the transcript does not hold before it", path, lineNo, e.FirstKeptUser)
			}
			messages = slices.Clone(messages[cut:])
			loaded = compactionState{summary: e.Summary, at: e.Time, usersBefore: e.FirstKeptUser}
		default:
			logger.Warn("agent: skipped a transcript entry of an unknown type", "path", path, "line", lineNo, "type", e.Type)
		}
		if last {
			needNewline = true
		}
	}
	return loaded, messages, int64(len(data)), needNewline, nil
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

// appendMessage writes m as one line and syncs the file.
func (t *transcript) appendMessage(m Message) error {
	return t.appendEntry(transcriptEntry{Type: entryMessage, Message: &m})
}

// appendCompaction records a compaction of a context of tokensBefore
// tokens.
func (t *transcript) appendCompaction(c compactionState, tokensBefore int) error {
	return t.appendEntry(transcriptEntry{
		Type: entryCompaction, Summary: c.summary, FirstKeptUser: c.usersBefore,
		Time: c.at, TokensBefore: tokensBefore,
	})
}

// appendEntry writes e as one line and syncs the file.
func (t *transcript) appendEntry(e transcriptEntry) error {
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("agent: encoding a transcript entry: %w", err)
	}
	t.cutTorn()
	buf := make([]byte, 0, len(line)+2)
	if t.needNewline || t.torn {
		buf = append(buf, '\n')
	}
	buf = append(append(buf, line...), '\n')
	n, err := t.f.Write(buf)
	if err == nil && n != len(buf) {
		err = io.ErrShortWrite
	}
	if err != nil {
		t.torn = true
		t.cutTorn()
		return fmt.Errorf("agent: writing transcript %s: %w", t.path, err)
	}
	if err := t.f.Sync(); err != nil {
		t.torn = true
		t.cutTorn()
		return fmt.Errorf("agent: syncing transcript %s: %w", t.path, err)
	}
	t.needNewline = false
	switch {
	case t.torn || t.size < 0:
		// The line went after a torn one that could not be cut away.
		t.torn = false
		t.size = -1
		if fi, err := t.f.Stat(); err == nil {
			t.size = fi.Size()
		}
	default:
		t.size += int64(len(buf))
	}
	return nil
}

// cutTorn truncates the file back to its sound lines after a failed
// append. When that fails (or the size is unknown) the torn bytes stay and
// the next append starts on a fresh line, so it never glues onto them; that
// append tries the cut again first.
func (t *transcript) cutTorn() {
	if !t.torn || t.size < 0 {
		return
	}
	if err := t.f.Truncate(t.size); err == nil {
		t.torn = false
	}
}

// close closes the file.
func (t *transcript) close() error { return t.f.Close() }

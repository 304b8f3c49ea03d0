package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
)

// Transcript entry types. Every line of a transcript is an envelope
// {"type": ..., ...}; "message" lines carry one Message. Lines of other
// types (written by later versions, e.g. compaction) are skipped on load.
const entryMessage = "message"

// transcriptEntry is one line of a transcript file.
type transcriptEntry struct {
	Type    string   `json:"type"`
	Message *Message `json:"message,omitempty"`
}

// transcript is a session's append-only JSONL file. Every append is one
// write of a whole line, then fsync.
type transcript struct {
	path        string
	f           *os.File
	needNewline bool
}

// openTranscript opens (creating it when missing) the transcript at path and
// loads its messages. A last line cut off by a crash mid-write (no newline,
// not JSON) is logged, dropped and truncated away; any other line that does
// not parse stops loading with the path and line number.
func openTranscript(path string, logger *slog.Logger) (*transcript, []Message, error) {
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("agent: reading transcript %s: %w", path, err)
	}
	messages, keep, needNewline, err := parseTranscript(path, data, logger)
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
	return &transcript{path: path, f: f, needNewline: needNewline}, messages, nil
}

// parseTranscript parses a transcript's bytes. keep is how many bytes are
// sound (less than len(data) when a torn last line is dropped);
// needNewline reports a sound last line without its newline.
func parseTranscript(path string, data []byte, logger *slog.Logger) (messages []Message, keep int64, needNewline bool, err error) {
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
		if perr := json.Unmarshal(line, &e); perr != nil || (e.Type == entryMessage && e.Message == nil) {
			if perr == nil {
				perr = errors.New("message entry without a message")
			}
			if last {
				logger.Warn("agent: dropped a torn last line of a transcript (the process stopped mid-write)",
					"path", path, "line", lineNo, "bytes", len(line))
				return messages, int64(start), false, nil
			}
			return nil, 0, false, fmt.Errorf("agent: transcript %s line %d does not parse: %w", path, lineNo, perr)
		}
		switch e.Type {
		case entryMessage:
			messages = append(messages, *e.Message)
		default:
			logger.Warn("agent: skipped a transcript entry of an unknown type", "path", path, "line", lineNo, "type", e.Type)
		}
		if last {
			needNewline = true
		}
	}
	return messages, int64(len(data)), needNewline, nil
}

// appendMessage writes m as one line and syncs the file.
func (t *transcript) appendMessage(m Message) error {
	line, err := json.Marshal(transcriptEntry{Type: entryMessage, Message: &m})
	if err != nil {
		return fmt.Errorf("agent: encoding a transcript entry: %w", err)
	}
	buf := make([]byte, 0, len(line)+2)
	if t.needNewline {
		buf = append(buf, '\n')
	}
	buf = append(append(buf, line...), '\n')
	if _, err := t.f.Write(buf); err != nil {
		return fmt.Errorf("agent: writing transcript %s: %w", t.path, err)
	}
	t.needNewline = false
	if err := t.f.Sync(); err != nil {
		return fmt.Errorf("agent: syncing transcript %s: %w", t.path, err)
	}
	return nil
}

// close closes the file.
func (t *transcript) close() error { return t.f.Close() }

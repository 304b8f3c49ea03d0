package turnview

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// StatusFile in the agent dir lists the tool status messages of the turns
// running now, with what each shows, so that after a crash or a kill the
// next start-up can edit the statuses the dead turns left: their hourglass
// and Stop button would stay for good. It is a cosmetic record, not state:
// lines are appended without fsync (a process kill loses none; a power
// loss may lose the last edits), a line that does not parse is skipped,
// and the file is emptied at start-up and once it has grown past
// statusLogMax with no status open.
const StatusFile = "tool-status.jsonl"

// StatusRecord is one line of StatusFile: a status shown or edited (its
// chat, message and visible text), or closed.
type StatusRecord struct {
	Scope  string `json:"scope,omitempty"`
	Msg    int    `json:"msg"`
	Text   string `json:"text,omitempty"`
	Closed bool   `json:"closed,omitempty"`
}

// statusLogMax is the size past which StatusFile starts afresh once no
// status is open. Not at every moment none is: emptying it frees its
// blocks, which on a full disk would let the next state write through
// only by luck.
const statusLogMax = 64 << 10

// StatusLog is StatusFile, open for appending.
type StatusLog struct {
	logger *slog.Logger
	mu     sync.Mutex
	f      *os.File
	size   int64
	open   map[int]bool
}

// OpenStatusLog reads what the statuses of the last run left open and
// starts the file afresh. The records are returned in the order their
// messages were first shown.
func OpenStatusLog(dir string, logger *slog.Logger) (*StatusLog, []StatusRecord, error) {
	path := filepath.Join(dir, StatusFile)
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	var order []int
	last := map[int]StatusRecord{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r StatusRecord
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Msg == 0 {
			continue
		}
		if _, seen := last[r.Msg]; !seen {
			order = append(order, r.Msg)
		}
		last[r.Msg] = r
	}
	var left []StatusRecord
	for _, id := range order {
		if r := last[id]; !r.Closed && r.Scope != "" {
			left = append(left, r)
		}
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, 0o600)
	if err != nil {
		return nil, nil, err
	}
	return &StatusLog{logger: logger, f: f, open: map[int]bool{}}, left, nil
}

// shown records that the status msg of scope shows text.
func (l *StatusLog) shown(scope string, msg int, text string) {
	l.append(StatusRecord{Scope: scope, Msg: msg, Text: text})
}

// closed records that the status msg is final: no restart needs to edit it.
func (l *StatusLog) closed(msg int) {
	l.append(StatusRecord{Msg: msg, Closed: true})
}

func (l *StatusLog) append(r StatusRecord) {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if r.Closed {
		if !l.open[r.Msg] {
			return
		}
		delete(l.open, r.Msg)
		if len(l.open) == 0 && l.size > statusLogMax {
			// Nothing is open: the file starts afresh.
			if err := l.f.Truncate(0); err == nil {
				l.size = 0
				return
			}
		}
	} else {
		l.open[r.Msg] = true
	}
	line, err := json.Marshal(r)
	if err != nil {
		return
	}
	n, err := l.f.Write(append(line, '\n'))
	l.size += int64(n)
	if err != nil {
		// A full disk costs only the edit after a crash.
		l.logger.Debug("the tool status record was not written", "err", err)
	}
}

// Close closes the file; a nil StatusLog is closed.
func (l *StatusLog) Close() {
	if l != nil {
		_ = l.f.Close()
	}
}

// cutStatusText is what a status a restart cut shows: what it showed, its
// running calls marked stopped, and why.
func cutStatusText(shown string) string {
	return strings.ReplaceAll(shown, "⏳", "⏹") + "\n\n⚠️ Cut short by a restart."
}

// EditCut edits the statuses the last run left open (OpenStatusLog's
// records) to say that a restart cut their turns, their Stop buttons gone:
// a Notice each, whose edit is a Preview (one try), in the order they were
// shown.
func (v *View) EditCut(left []StatusRecord) {
	for _, r := range left {
		t, err := ParseTarget(r.Scope)
		if err != nil {
			continue
		}
		o := v.To(t)
		o.Notice(func(ctx context.Context, _ Noticer) {
			if _, err := o.Preview(ctx, nil, Message{Edit: r.Msg, Text: cutStatusText(r.Text), Buttons: NoButtons()}); err != nil {
				v.Logger.Debug("a status a restart cut was not edited", "scope", t.String(), "err", err)
			}
		})
	}
}

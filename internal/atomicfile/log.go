package atomicfile

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"sync"
)

// Log is an append-only file of JSON lines. Every [Log.Append] is one write
// of whole lines, then an fsync; an append that fails (a short write on a
// full disk, a failed fsync) is truncated away again, and while that
// truncation fails no append is written, so a torn line can only ever be
// the file's last one, which [OpenLog] drops. It is safe for concurrent use.
type Log struct {
	path string
	perm fs.FileMode
	open func(path string, perm fs.FileMode) (file, error)

	mu sync.Mutex
	f  file // nil once closed
	// size is the length of the file's sound lines; needNewline reports
	// that they end without a newline; torn reports bytes of a failed
	// append after them that could not be cut away yet.
	size        int64
	needNewline bool
	torn        bool
}

// file is what a Log needs of its file; *os.File satisfies it, and tests
// inject failing writes, fsyncs and truncations through it.
type file interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Close() error
}

// openAppend opens path for appending, creating it with perm.
func openAppend(path string, perm fs.FileMode) (file, error) {
	return os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, perm)
}

// OpenLog opens the log at path, creating it with perm when it is missing,
// and calls each with every non-empty line of it, in order, numbered from
// 1. An error from each stops the opening ("<path> line <n> does not
// parse: <err>") and the file is left as it is. The one exception is the
// last line when it is not valid JSON: a write cut short leaves a prefix of
// a line, which never is, so that line is logged (its number and length,
// never its content), not passed to each, and truncated away. A sound last
// line without its newline is kept; the next append starts a new line.
func OpenLog(path string, perm fs.FileMode, logger *slog.Logger, each func(lineNo int, line []byte) error) (*Log, error) {
	return openLog(path, perm, logger, each, openAppend)
}

func openLog(path string, perm fs.FileMode, logger *slog.Logger, each func(int, []byte) error, open func(string, fs.FileMode) (file, error)) (*Log, error) {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	data, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("atomicfile: reading %s: %w", path, err)
	}
	keep, needNewline, err := scanLines(path, data, logger, each)
	if err != nil {
		return nil, err
	}
	f, err := open(path, perm)
	if err != nil {
		return nil, fmt.Errorf("atomicfile: opening %s: %w", path, err)
	}
	if keep < int64(len(data)) {
		if err := f.Truncate(keep); err != nil {
			f.Close()
			return nil, fmt.Errorf("atomicfile: dropping the torn last line of %s: %w", path, err)
		}
	}
	return &Log{path: path, perm: perm, open: open, f: f, size: keep, needNewline: needNewline}, nil
}

// scanLines passes the lines of data to each. keep is how many bytes are
// sound (less than len(data) when a torn last line is dropped);
// needNewline reports a sound last line without its newline.
func scanLines(path string, data []byte, logger *slog.Logger, each func(int, []byte) error) (keep int64, needNewline bool, err error) {
	last := len(bytes.TrimRight(data, " \t\r\n"))
	offset := 0
	for lineNo := 1; offset < len(data); lineNo++ {
		end := bytes.IndexByte(data[offset:], '\n')
		if end < 0 {
			end = len(data) - offset
		}
		start := offset
		line := bytes.TrimSpace(data[start : start+end])
		offset += end + 1
		if len(line) == 0 {
			continue
		}
		if offset >= last && !json.Valid(line) {
			logger.Warn("atomicfile: dropped a torn last line (the process stopped while writing it)",
				"path", path, "line", lineNo, "bytes", len(line))
			return int64(start), false, nil
		}
		if err := each(lineNo, line); err != nil {
			return 0, false, fmt.Errorf("%s line %d does not parse: %w", path, lineNo, err)
		}
		needNewline = offset > len(data)
	}
	return int64(len(data)), needNewline, nil
}

// Append writes entries, each encoded as one JSON line, in one write, and
// fsyncs the file. When that fails, what it wrote is truncated away; if
// even that fails, the next append tries the truncation again first and
// fails without writing while it does not succeed.
func (l *Log) Append(entries ...any) error {
	if len(entries) == 0 {
		return nil
	}
	buf, err := l.encodeAndLock(entries)
	if err != nil {
		return err
	}
	defer l.mu.Unlock()
	if err := l.cutTorn(); err != nil {
		return fmt.Errorf("atomicfile: appending to %s: the torn end of an earlier append cannot be cut away: %w", l.path, err)
	}
	out := buf
	if l.needNewline {
		out = append([]byte{'\n'}, out...)
	}
	n, err := l.f.Write(out)
	if err == nil && n != len(out) {
		err = io.ErrShortWrite
	}
	if err == nil {
		if err = l.f.Sync(); err != nil {
			err = fmt.Errorf("fsync: %w", err)
		}
	}
	if err != nil {
		l.torn = true
		_ = l.cutTorn() // when it fails, the next append tries again
		return fmt.Errorf("atomicfile: appending to %s: %w", l.path, err)
	}
	l.needNewline = false
	l.size += int64(len(out))
	return nil
}

// encodeAndLock returns entries as JSON lines with l locked, or an error,
// with l unlocked, when an entry does not encode or l is closed.
func (l *Log) encodeAndLock(entries []any) ([]byte, error) {
	var buf bytes.Buffer
	for _, e := range entries {
		line, err := json.Marshal(e)
		if err != nil {
			return nil, fmt.Errorf("atomicfile: encoding an entry of %s: %w", l.path, err)
		}
		buf.Write(line)
		buf.WriteByte('\n')
	}
	l.mu.Lock()
	if l.f == nil {
		l.mu.Unlock()
		return nil, fmt.Errorf("atomicfile: %s is closed", l.path)
	}
	return buf.Bytes(), nil
}

// cutTorn truncates the file back to its sound lines after a failed
// append. When that fails the torn bytes stay, and so does the need to cut
// them.
func (l *Log) cutTorn() error {
	if !l.torn {
		return nil
	}
	if err := l.f.Truncate(l.size); err != nil {
		return err
	}
	l.torn = false
	return nil
}

// Rewrite replaces the whole log with entries, through [WriteFile], and
// goes on appending after them. When the replacement fails the log is as it
// was; when the new file cannot be opened afterwards the log is closed.
func (l *Log) Rewrite(entries ...any) error {
	buf, err := l.encodeAndLock(entries)
	if err != nil {
		return err
	}
	defer l.mu.Unlock()
	if err := WriteFile(l.path, buf, l.perm); err != nil {
		return err
	}
	l.f.Close()
	f, err := l.open(l.path, l.perm)
	if err != nil {
		// The old descriptor would append to the replaced file, where
		// nothing could be read back: the log is closed instead.
		l.f = nil
		return fmt.Errorf("atomicfile: reopening %s: %w", l.path, err)
	}
	l.f, l.size, l.needNewline, l.torn = f, int64(len(buf)), false, false
	return nil
}

// Size returns the length of the log's sound lines.
func (l *Log) Size() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.size
}

// Close closes the file. Appending afterwards is an error.
func (l *Log) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	l.f = nil
	return err
}

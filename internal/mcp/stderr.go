package mcp

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// Bounds of what a server's stderr may cost.
const (
	// maxStderrLine is the longest stderr line logged; the rest of a
	// longer line is dropped.
	maxStderrLine = 1024
	// maxStderrLogged is how many bytes of a process's stderr are logged
	// at most; later output only feeds the tail.
	maxStderrLogged = 64 << 10
	// stderrTailSize is how much of the end of stderr an error message
	// quotes.
	stderrTailSize = 2048
)

// stderrLog drains a server's stderr: the stream goes through the redactor
// (which redacts a secret however the writes split it), then each line is
// logged at Debug, bounded, and the last stderrTailSize bytes are kept for
// error messages. It is safe for concurrent use.
type stderrLog struct {
	red  *redactor.Writer
	sink *stderrSink
}

// newStderrLog returns a stderr drain that logs to logger with server's name
// after redacting with red.
func newStderrLog(logger *slog.Logger, red *redactor.Redactor, server string) *stderrLog {
	sink := &stderrSink{logger: logger, server: server}
	return &stderrLog{red: red.NewWriter(sink), sink: sink}
}

// Write redacts p and passes it on; it never fails, so the child is never
// blocked or broken by its stderr.
func (l *stderrLog) Write(p []byte) (int, error) {
	_, _ = l.red.Write(p)
	return len(p), nil
}

// finish flushes what the redactor holds back and logs a last partial line.
// Call it once the process has exited and its stderr is drained.
func (l *stderrLog) finish() {
	_ = l.red.Flush()
	l.sink.flushLine()
}

// tail returns the end of the redacted stderr so far, trimmed, starting at
// a line boundary when there is one.
func (l *stderrLog) tail() string { return l.sink.tailText() }

// stderrSink receives the redacted stream.
type stderrSink struct {
	logger *slog.Logger
	server string

	mu      sync.Mutex
	line    []byte
	dropped bool // the current line exceeded maxStderrLine
	logged  int
	capped  bool
	tail    []byte
}

// Write splits the redacted stream into lines.
func (s *stderrSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tail = append(s.tail, p...)
	if over := len(s.tail) - stderrTailSize; over > 0 {
		s.tail = append(s.tail[:0], s.tail[over:]...)
	}
	rest := p
	for len(rest) > 0 {
		i := bytes.IndexByte(rest, '\n')
		if i < 0 {
			s.addToLine(rest)
			break
		}
		s.addToLine(rest[:i])
		s.logLine()
		rest = rest[i+1:]
	}
	return len(p), nil
}

// addToLine appends b to the current line, up to maxStderrLine.
func (s *stderrSink) addToLine(b []byte) {
	if room := maxStderrLine - len(s.line); len(b) > room {
		b = b[:max(room, 0)]
		s.dropped = true
	}
	s.line = append(s.line, b...)
}

// logLine logs the current line, within the budget, and starts a new one.
func (s *stderrSink) logLine() {
	line := strings.TrimRight(string(s.line), "\r")
	dropped := s.dropped
	s.line, s.dropped = s.line[:0], false
	if line == "" && !dropped {
		return
	}
	if s.capped {
		return
	}
	if s.logged+len(line) > maxStderrLogged {
		s.capped = true
		s.logger.Debug("mcp: server stderr log limit reached; further output is not logged", "server", s.server)
		return
	}
	s.logged += len(line)
	if dropped {
		line = validUTF8Prefix(line) + " [line truncated]"
	}
	s.logger.Debug("mcp: server stderr", "server", s.server, "line", line)
}

// flushLine logs a last line that has no newline.
func (s *stderrSink) flushLine() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.line) > 0 || s.dropped {
		s.logLine()
	}
}

// tailText returns the kept end of the stream.
func (s *stderrSink) tailText() string {
	s.mu.Lock()
	t := string(s.tail)
	full := len(s.tail) == stderrTailSize
	s.mu.Unlock()
	if full {
		if i := strings.IndexByte(t, '\n'); i >= 0 && i < len(t)-1 {
			t = t[i+1:]
		}
	}
	return strings.TrimSpace(strings.ToValidUTF8(t, ""))
}

// validUTF8Prefix drops a rune cut in half at the end of s.
func validUTF8Prefix(s string) string {
	for len(s) > 0 {
		r, size := utf8.DecodeLastRuneInString(s)
		if r != utf8.RuneError || size > 1 {
			break
		}
		s = s[:len(s)-1]
	}
	return s
}

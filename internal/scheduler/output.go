package scheduler

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// headBuffer keeps the first limit bytes written to it and notes whether
// more came. It never fails a write, so a chatty script is not killed by a
// broken pipe.
type headBuffer struct {
	mu    sync.Mutex
	limit int
	buf   []byte
	cut   bool
}

// Write keeps what fits under the limit and drops the rest.
func (h *headBuffer) Write(p []byte) (int, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := len(p)
	room := h.limit - len(h.buf)
	if len(p) > room {
		h.cut = true
		p = p[:max(room, 0)]
	}
	h.buf = append(h.buf, p...)
	return n, nil
}

// text returns what was kept, without a rune cut in half at the end, and
// whether output was dropped.
func (h *headBuffer) text() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	b := h.buf
	if h.cut {
		for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
			if utf8.RuneStart(b[i]) {
				if !utf8.FullRune(b[i:]) {
					b = b[:i]
				}
				break
			}
		}
	}
	return string(b), h.cut
}

// tailBuffer keeps the last limit bytes written to it.
type tailBuffer struct {
	mu    sync.Mutex
	limit int
	buf   []byte
}

// Write appends p, dropping the oldest bytes beyond the limit.
func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := len(p)
	if len(p) > t.limit {
		p = p[len(p)-t.limit:]
	}
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.limit; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return n, nil
}

// String returns the kept tail, starting at a whole rune.
func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	b := t.buf
	for len(b) > 0 && !utf8.RuneStart(b[0]) {
		b = b[1:]
	}
	return string(b)
}

// lastLines returns at most n of the last lines of s, trimmed.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n\r\t "), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

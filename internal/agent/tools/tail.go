package tools

import (
	"bytes"
	"fmt"
	"os"
	"sync"
	"unicode/utf8"
)

// tailBuffer is the bash tool's output sink: it keeps the last maxBytes
// bytes in a ring, counts bytes and lines, and spills the whole output to a
// file as soon as the result might be truncated. Memory stays bounded by the
// ring whatever the command prints. Write is called from one goroutine; the
// snapshot methods may run concurrently with it. It keeps what it is given
// as it is: the bash tool redacts the stream before it (see redactStream),
// since a tail or a spill cut inside a secret could not be redacted after.
type tailBuffer struct {
	maxLines int
	// openSpill creates the file the full output goes to; spillLimit caps
	// what is saved in it.
	openSpill  func() (*os.File, error)
	spillLimit int64

	// file, spilled, spillCut and spillErr belong to the writing goroutine
	// until the output has ended. spillCut reports that the output passed
	// spillLimit, so the file holds only its first spillLimit bytes.
	file     *os.File
	spilled  int64
	spillCut bool
	spillErr error

	mu       sync.Mutex
	ring     []byte
	next     int   // where the next byte goes in ring
	total    int64 // bytes written so far
	newlines int64 // '\n' written so far
	last     byte  // the last byte written
}

// newTailBuffer returns a sink that keeps maxLines lines or maxBytes
// bytes of tail, whichever is smaller, and spills at most spillLimit bytes
// through openSpill.
func newTailBuffer(maxLines, maxBytes int, spillLimit int64, openSpill func() (*os.File, error)) *tailBuffer {
	return &tailBuffer{maxLines: maxLines, ring: make([]byte, maxBytes), openSpill: openSpill, spillLimit: spillLimit}
}

// Write adds p to the output. It never fails: a spill file that cannot be
// written is reported by spillError, and the tail is kept regardless.
func (t *tailBuffer) Write(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	nl := int64(bytes.Count(p, []byte{'\n'}))
	t.mu.Lock()
	mightTruncate := t.total+int64(len(p)) > int64(len(t.ring)) || t.newlines+nl >= int64(t.maxLines)
	if t.file == nil && t.spillErr == nil && mightTruncate {
		// The ring has not wrapped yet, so it holds the whole output so far.
		t.startSpill(t.ring[:t.total])
	}
	t.push(p)
	t.total += int64(len(p))
	t.newlines += nl
	t.last = p[len(p)-1]
	t.mu.Unlock()
	t.spill(p)
	return len(p), nil
}

// spill saves p in the spill file, up to the spill limit; past it only the
// ring keeps the output.
func (t *tailBuffer) spill(p []byte) {
	if t.file == nil || t.spillCut {
		return
	}
	if room := t.spillLimit - t.spilled; int64(len(p)) > room {
		p = p[:max(room, 0)]
		t.spillCut = true
	}
	if len(p) == 0 {
		return
	}
	n, err := t.file.Write(p)
	t.spilled += int64(n)
	if err != nil {
		t.spillErr = fmt.Errorf("writing the full output: %w", err)
		t.file.Close()
		t.file = nil
	}
}

// startSpill opens the spill file and writes head, the output so far.
func (t *tailBuffer) startSpill(head []byte) {
	f, err := t.openSpill()
	if err != nil {
		t.spillErr = fmt.Errorf("saving the full output: %w", err)
		return
	}
	t.file = f
	t.spill(head)
}

// push copies p into the ring, keeping only its last len(ring) bytes.
func (t *tailBuffer) push(p []byte) {
	size := len(t.ring)
	if len(p) >= size {
		copy(t.ring, p[len(p)-size:])
		t.next = 0
		return
	}
	n := copy(t.ring[t.next:], p)
	if n < len(p) {
		copy(t.ring, p[n:])
	}
	t.next = (t.next + len(p)) % size
}

// spillResult is what became of the full output.
type spillResult struct {
	// path is the file holding it, empty when none was kept.
	path string
	// cutAt is the spill limit when the file holds only the output's
	// first cutAt bytes, else zero.
	cutAt int64
	// err says what went wrong saving it.
	err error
}

// finish closes the spill file. It returns the file's path when the output
// was truncated, and removes the file when it was not needed after all.
func (t *tailBuffer) finish(truncated bool) spillResult {
	if t.file == nil {
		if truncated {
			return spillResult{err: t.spillErr}
		}
		return spillResult{}
	}
	name := t.file.Name()
	cerr := t.file.Close()
	t.file = nil
	if !truncated {
		os.Remove(name)
		return spillResult{}
	}
	res := spillResult{path: name, err: t.spillErr}
	if t.spillCut {
		res.cutAt = t.spillLimit
	}
	if cerr != nil {
		res.err = fmt.Errorf("closing the full output: %w", cerr)
	}
	return res
}

// tailView is a consistent picture of the output's tail.
type tailView struct {
	// Text is the tail that fits the limits.
	Text string
	// ShownLines and ShownBytes measure Text.
	ShownLines int
	ShownBytes int
	// TotalLines and TotalBytes measure the whole output.
	TotalLines int64
	TotalBytes int64
	// Truncated reports that Text is not the whole output.
	Truncated bool
	// CutMidLine reports that Text starts inside a line longer than the
	// byte limit.
	CutMidLine bool
}

// snapshot returns the current tail within the limits. The cut is made at
// a line boundary unless the last line alone exceeds the byte limit.
func (t *tailBuffer) snapshot() tailView {
	t.mu.Lock()
	size := len(t.ring)
	var data []byte
	wrapped := t.total > int64(size)
	if wrapped {
		data = make([]byte, 0, size)
		data = append(data, t.ring[t.next:]...)
		data = append(data, t.ring[:t.next]...)
	} else {
		data = append([]byte(nil), t.ring[:t.total]...)
	}
	v := tailView{TotalBytes: t.total, TotalLines: t.newlines}
	if t.total > 0 && t.last != '\n' {
		v.TotalLines++
	}
	t.mu.Unlock()

	if wrapped {
		// Drop the partial first line, unless it is the only one.
		if i := bytes.IndexByte(data, '\n'); i >= 0 && i < len(data)-1 {
			data = data[i+1:]
		} else {
			v.CutMidLine = true
			for len(data) > 0 && !utf8.RuneStart(data[0]) {
				data = data[1:]
			}
		}
	}
	// Keep the last maxLines lines.
	body := bytes.TrimSuffix(data, []byte{'\n'})
	lines := bytes.Count(body, []byte{'\n'}) + 1
	if len(data) == 0 {
		lines = 0
	}
	if lines > t.maxLines {
		cut := len(body)
		for range t.maxLines {
			cut = bytes.LastIndexByte(body[:cut], '\n')
		}
		data = data[cut+1:]
		lines = t.maxLines
		v.CutMidLine = false
	}
	v.Text = string(data)
	v.ShownLines = lines
	v.ShownBytes = len(data)
	v.Truncated = int64(len(data)) < v.TotalBytes
	return v
}

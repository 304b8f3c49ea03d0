package redactor

import (
	"errors"
	"io"
	"sync"
	"unsafe"
)

// errClosed is returned by writes to a closed Writer.
var errClosed = errors.New("redactor: write to closed writer")

// Writer is the streaming form of [Redactor.Redact]: what it writes to the
// underlying writer is exactly Redact of everything written to it, however
// the writes split the stream, provided Flush is only called at the end.
// It holds back only the input that could still become part of a match,
// so text is passed on as soon as no secret can begin in it, and memory
// stays bounded on endless output: at most the longest raw pattern's length
// less one byte, or for an encoded form in progress its symbols with at most
// maxGap skipped bytes before each (maxEncodedLen·(maxGap+1) bytes in the
// worst case, 128 KiB; a wrapped or dumped form holds back little more than
// itself). It is safe for concurrent use. Close flushes it but does not close the underlying
// writer.
type Writer struct {
	mu sync.Mutex
	r  *Redactor // nil or empty: pass everything through
	w  io.Writer
	sc *scanner // both channels' state after the pos bytes written so far

	pos     int    // bytes written so far
	out     int    // input before this position has been emitted or dropped
	held    []byte // raw input from position heldStart to pos
	hStart  int
	spans   []span // replacements not emitted yet, sorted and disjoint
	rawNew  []span // the raw channel's spans from the current write
	encNew  []span // the encoded channel's, likewise
	merged  []span // the union being built
	scratch []byte // output being assembled
	err     error  // first error from w, returned by every later call
	closed  bool
}

// NewWriter returns a Writer that writes the redacted stream to w.
func (r *Redactor) NewWriter(w io.Writer) *Writer {
	rw := &Writer{w: w}
	if !r.empty() {
		rw.r = r
		rw.sc = &scanner{stream: true, partial: true}
	}
	return rw
}

// Write redacts p as part of the stream and writes whatever is final to the
// underlying writer. It returns len(p) unless the underlying writer failed
// or the Writer is closed.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return 0, errClosed
	}
	if w.err != nil {
		return 0, w.err
	}
	if w.r == nil {
		return w.pass(p)
	}
	if len(p) == 0 {
		return 0, nil
	}
	start := w.pos
	s := unsafe.String(&p[0], len(p))
	w.rawNew, w.encNew = w.r.scan(w.sc, s, start, w.out, w.rawNew[:0], w.encNew[:0])
	w.pos += len(p)
	w.mergeNew()
	w.emit(p, start, false)
	if err := w.writeScratch(); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Flush writes everything held back, as if the stream ended here. A secret
// that straddles the flush point is only redacted from the flush point on,
// so call it at message boundaries only.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flush()
}

// Close flushes the Writer; later writes fail. It does not close the
// underlying writer.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil
	}
	err := w.flush()
	w.closed = true
	return err
}

func (w *Writer) flush() error {
	if w.err != nil {
		return w.err
	}
	if w.r == nil || w.closed {
		return nil
	}
	w.encNew = w.r.finish(w.sc, w.pos, w.out, w.encNew[:0])
	w.rawNew = w.rawNew[:0]
	w.mergeNew()
	w.emit(nil, w.pos, true)
	return w.writeScratch()
}

// pass writes p unchanged: used when there are no patterns.
func (w *Writer) pass(p []byte) (int, error) {
	n, err := w.w.Write(p)
	if err != nil {
		w.err = err
	} else if n < len(p) {
		w.err = io.ErrShortWrite
	}
	return n, w.err
}

// emit appends to the scratch buffer everything that can no longer change:
// raw input before final, and every span that ends before it (a span ending
// at final or later may still grow by a match that touches it). p holds the
// input from position pStart, the held-back bytes the input before it. At
// the end of the stream (atEnd), everything is final.
func (w *Writer) emit(p []byte, pStart int, atEnd bool) {
	// Any match still to come starts within the longest ending of the
	// stream that begins a pattern (the raw channel's, found by the scan)
	// or where the encoded channel's match in progress began. Before
	// that, nothing can change.
	final := w.r.pending(w.sc, w.pos)
	if atEnd {
		final = w.pos + 1
	}
	final = max(final, w.out)
	done := 0
	for _, sp := range w.spans {
		if sp.end >= final {
			break
		}
		w.appendRaw(p, pStart, w.out, sp.start)
		w.scratch = append(w.scratch, Token...)
		w.out = sp.end
		done++
	}
	w.spans = append(w.spans[:0], w.spans[done:]...)
	limit := min(final, w.pos)
	if len(w.spans) > 0 {
		limit = min(limit, w.spans[0].start)
	}
	if limit > w.out {
		w.appendRaw(p, pStart, w.out, limit)
		w.out = limit
	}

	// Keep the raw input that may still be emitted: everything from out,
	// less the part of a pending span that starts at out.
	keep := w.out
	if len(w.spans) > 0 && w.spans[0].start <= keep {
		keep = w.spans[0].end
	}
	w.hold(p, pStart, keep)
}

// mergeNew merges the spans the channels found in the current write into
// the pending ones, reusing the Writer's buffers.
func (w *Writer) mergeNew() {
	if len(w.rawNew) == 0 && len(w.encNew) == 0 {
		return
	}
	w.merged = mergeInto(w.merged[:0], w.spans, w.rawNew)
	w.spans, w.merged = w.merged, w.spans
	w.merged = mergeInto(w.merged[:0], w.spans, w.encNew)
	w.spans, w.merged = w.merged, w.spans
}

// mergeInto appends to out the union of a and b, each sorted, disjoint
// and non-touching, as one such list.
func mergeInto(out, a, b []span) []span {
	for len(a) > 0 || len(b) > 0 {
		var next span
		if len(b) == 0 || len(a) > 0 && a[0].start <= b[0].start {
			next, a = a[0], a[1:]
		} else {
			next, b = b[0], b[1:]
		}
		if n := len(out); n > 0 && out[n-1].end >= next.start {
			out[n-1].end = max(out[n-1].end, next.end)
			continue
		}
		out = append(out, next)
	}
	return out
}

// appendRaw appends the raw input from position from to position to.
func (w *Writer) appendRaw(p []byte, pStart, from, to int) {
	if from >= to {
		return
	}
	if from < pStart {
		end := min(to, pStart)
		w.scratch = append(w.scratch, w.held[from-w.hStart:end-w.hStart]...)
		from = end
	}
	if from < to {
		w.scratch = append(w.scratch, p[from-pStart:to-pStart]...)
	}
}

// hold keeps the raw input from position keep to the end.
func (w *Writer) hold(p []byte, pStart, keep int) {
	if keep < pStart {
		n := copy(w.held, w.held[keep-w.hStart:])
		w.held = append(w.held[:n], p...)
	} else {
		w.held = append(w.held[:0], p[keep-pStart:]...)
	}
	w.hStart = keep
}

// writeScratch writes the assembled output to the underlying writer.
func (w *Writer) writeScratch() error {
	if len(w.scratch) == 0 {
		return nil
	}
	n, err := w.w.Write(w.scratch)
	if err == nil && n < len(w.scratch) {
		err = io.ErrShortWrite
	}
	w.scratch = w.scratch[:0]
	if err != nil {
		w.err = err
	}
	return err
}

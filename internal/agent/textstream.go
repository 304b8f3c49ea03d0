package agent

import (
	"sync"
	"unsafe"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// textStream is a turn's answer text on its way to the events: every delta
// passes a streaming redactor ([redactor.Writer]), and only what it lets go
// is emitted. The writer holds back a trailing run that could still become
// a secret (or one of its encoded forms) until the next delta settles it,
// so a secret the model streams in pieces never shows, not even as the
// beginning of one at the end of a delta, and what the deltas add up to is
// exactly [redactor.Redactor.Redact] of the text. The held-back run is let
// go at the end of each model step (flush), which is where the front end
// ends a message too; a restarted answer stream drops it (discard). It is
// safe for concurrent use: a provider that runs its own tool loop (Claude
// Code) streams text on one goroutine while its tool calls flush on
// another, and each delta is emitted before the next is written.
type textStream struct {
	mu   sync.Mutex
	red  *redactor.Redactor
	emit func(string)
	w    *redactor.Writer
	out  deltaBuffer
}

// deltaBuffer collects what the writer lets go during one write or flush.
type deltaBuffer []byte

// Write appends p; it never fails.
func (b *deltaBuffer) Write(p []byte) (int, error) {
	*b = append(*b, p...)
	return len(p), nil
}

// newTextStream returns the stream of one turn, handing each redacted
// delta to emit.
func newTextStream(red *redactor.Redactor, emit func(string)) *textStream {
	t := &textStream{red: red, emit: emit}
	t.w = red.NewWriter(&t.out)
	return t
}

// write passes delta through the redactor and emits what it lets go.
func (t *textStream) write(delta string) {
	if delta == "" {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	// The writer copies what it keeps and never writes to p, so it can
	// read the delta's bytes in place. The buffer never fails, so neither
	// does the writer.
	_, _ = t.w.Write(unsafe.Slice(unsafe.StringData(delta), len(delta)))
	t.send(delta)
}

// flush emits what the redactor holds back: the model's step (or the
// text before a bridged tool call) is over.
func (t *textStream) flush() {
	t.mu.Lock()
	defer t.mu.Unlock()
	_ = t.w.Flush()
	t.send("")
}

// discard drops what the redactor holds back, unsent: the answer stream
// was cut off and starts anew, and the text streamed since the request
// began is void.
func (t *textStream) discard() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.out = t.out[:0]
	t.w = t.red.NewWriter(&t.out)
}

// send emits the collected output as one delta: in itself when it is the
// delta just written, as it mostly is (no copy). The caller holds mu, so
// deltas are emitted in the order they were written.
func (t *textStream) send(in string) {
	if len(t.out) == 0 {
		return
	}
	delta := in
	if string(t.out) != in {
		delta = string(t.out)
	}
	t.out = t.out[:0]
	t.emit(delta)
}

package credproxy

import (
	"bytes"
	"fmt"
	"io"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// replacingBody is a response body in which every occurrence of a few
// exact byte strings (the real values, and the encoded credentials the
// proxy sent) is replaced, as it streams, by its stand-in form: the
// stand-in, or the same encoding of the stand-in's pair. The agent sees
// back what it sent, and the body keeps its length, so its Content-Length
// holds. Between reads it holds back only an end that could begin a
// pattern (at most the longest pattern's length less one byte), so memory
// stays flat however long the body, and a streamed answer is not kept
// waiting.
//
// It is the proxy's own redaction, not the redactor's: what a bound host
// could send back is the value it was given, as it was given, and exact
// matching keeps a download near the speed of TLS, where the redactor's
// search for every derived form runs at a fraction of it. Whatever the
// agent's tools print still passes the bot's redaction boundary, with
// every form.
type replacingBody struct {
	src      io.ReadCloser
	patterns [][]byte
	with     [][]byte // with[i] replaces patterns[i], as long as it
	buf      []byte   // input not yet scanned past, from the source
	out      []byte   // output ready for the reader
	outPos   int
	eof      bool
}

// newReplacingBody returns src with each key of replace replaced by its
// value, which must be as long. size is the body's length when known (-1
// otherwise): a short answer gets a buffer its size.
func newReplacingBody(src io.ReadCloser, replace map[string]string, size int64) *replacingBody {
	n := 64 << 10
	if size >= 0 && size < int64(n) {
		n = int(size) + 64
	}
	b := &replacingBody{src: src, buf: make([]byte, 0, n)}
	for p, with := range replace {
		if len(p) >= redactor.MinimumSecretLength && len(with) == len(p) {
			b.patterns = append(b.patterns, []byte(p))
			b.with = append(b.with, []byte(with))
		}
	}
	return b
}

func (b *replacingBody) Read(p []byte) (int, error) {
	for b.outPos == len(b.out) {
		if b.eof && len(b.buf) == 0 {
			return 0, io.EOF
		}
		b.out, b.outPos = b.out[:0], 0
		if !b.eof {
			if cap(b.buf)-len(b.buf) < 64 {
				grown := make([]byte, len(b.buf), max(2*cap(b.buf), 4<<10))
				copy(grown, b.buf)
				b.buf = grown
			}
			n, err := b.src.Read(b.buf[len(b.buf):cap(b.buf)])
			b.buf = b.buf[:len(b.buf)+n]
			if err == io.EOF {
				b.eof = true
			} else if err != nil {
				return 0, fmt.Errorf("credential proxy: read the answer: %w", err)
			}
		}
		b.scan()
	}
	n := copy(p, b.out[b.outPos:])
	b.outPos += n
	return n, nil
}

// scan moves what is final from buf to out: everything but a tail that
// could begin a pattern (all of it at the end of the source), each
// pattern replaced.
func (b *replacingBody) scan() {
	keep := 0
	if !b.eof {
		keep = b.partialTail()
	}
	limit := len(b.buf) - keep
	i := 0
	for {
		at, k := b.next(b.buf[i:])
		if at < 0 || i+at >= limit {
			break
		}
		b.out = append(b.out, b.buf[i:i+at]...)
		b.out = append(b.out, b.with[k]...)
		i += at + len(b.patterns[k])
	}
	if i < limit {
		b.out = append(b.out, b.buf[i:limit]...)
		i = limit
	}
	rest := copy(b.buf, b.buf[i:])
	b.buf = b.buf[:rest]
}

// partialTail returns the length of the longest end of buf that is the
// beginning of a pattern, shorter than it: what must wait for more input.
// Nothing else is held back, so a streamed answer's last event is not
// kept waiting for the next.
func (b *replacingBody) partialTail() int {
	keep := 0
	for _, p := range b.patterns {
		for k := min(len(p)-1, len(b.buf)); k > keep; k-- {
			if bytes.HasPrefix(p, b.buf[len(b.buf)-k:]) {
				keep = k
				break
			}
		}
	}
	return keep
}

// next returns the leftmost match of a pattern in s (the longest of
// those that start there) and the pattern's index, or -1.
func (b *replacingBody) next(s []byte) (int, int) {
	at, k := -1, 0
	for i, p := range b.patterns {
		end := len(s)
		if at >= 0 {
			end = min(len(s), at+len(p))
		}
		if j := bytes.Index(s[:end], p); j >= 0 && (at < 0 || j < at || (j == at && len(p) > len(b.patterns[k]))) {
			at, k = j, i
		}
	}
	return at, k
}

func (b *replacingBody) Close() error { return b.src.Close() }

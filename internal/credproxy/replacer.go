package credproxy

import (
	"bytes"
	"fmt"
	"io"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// patternSet is what a bound host's answer is matched for: a few exact
// byte strings (the real values, and the encoded credentials the proxy
// sent), each with what replaces it, as long. It is made once for the
// real values at start and again only for a request that carried an
// encoded pair, so an answer costs no set of its own.
type patternSet struct {
	patterns [][]byte
	with     [][]byte // with[i] replaces patterns[i], as long as it
	// anchors[i] is the offset in patterns[i] of the byte it is searched
	// for by (see anchor): the one least likely in an answer.
	anchors []int
	longest int
}

// newPatternSet returns the set that replaces each key of replace by its
// value. A key shorter than the redactor's shortest secret, or whose
// value is not as long, is left out: the body keeps its length, so its
// Content-Length holds.
func newPatternSet(replace map[string]string) *patternSet {
	s := &patternSet{}
	for p, with := range replace {
		s.add(p, with)
	}
	return s
}

// add adds p, replaced by with.
func (s *patternSet) add(p, with string) {
	if len(p) < redactor.MinimumSecretLength || len(with) != len(p) {
		return
	}
	s.patterns = append(s.patterns, []byte(p))
	s.with = append(s.with, []byte(with))
	s.anchors = append(s.anchors, anchor(p))
	s.longest = max(s.longest, len(p))
}

// withExtra returns s with the pairs of extra added, or s itself when there
// are none.
func (s *patternSet) withExtra(extra map[string]string) *patternSet {
	if len(extra) == 0 {
		return s
	}
	out := &patternSet{
		patterns: append([][]byte(nil), s.patterns...),
		with:     append([][]byte(nil), s.with...),
		anchors:  append([]int(nil), s.anchors...),
		longest:  s.longest,
	}
	for p, with := range extra {
		out.add(p, with)
	}
	return out
}

// anchor returns the offset of the byte of p that an answer is least
// likely to hold, by a rough ranking of how often bytes occur in JSON,
// HTML and prose: an upper-case letter or a digit of a token's random
// part, never its fixed prefix (which the stand-in shares, and which an
// answer echoing the stand-in is full of). Searching for that byte first
// keeps the scan at the speed of memchr where the first byte ('g' of
// "ghp_") would stop it every few bytes. Which byte is chosen changes
// the speed, never what is found.
func anchor(p string) int {
	best, bestRank := 0, 1<<8
	for i := 0; i < len(p); i++ {
		if r := byteRank(p[i]); r < bestRank {
			best, bestRank = i, r
		}
	}
	return best
}

// byteRank is how common b is in an API's answer, roughly: lower is
// rarer.
func byteRank(b byte) int {
	switch {
	case b == 'Q' || b == 'X' || b == 'Z' || b == 'J' || b == 'K' || b == 'V' || b == 'W' || b == 'Y' || b == 'q' || b == 'z' || b == 'j':
		return 1
	case b >= 'A' && b <= 'Z':
		return 2
	case b == 'x' || b == 'k' || b == 'v' || b == 'w' || b == 'y':
		return 3
	case b >= '0' && b <= '9':
		return 5
	case b >= 'a' && b <= 'z':
		return 8
	case b == ' ' || b == '"' || b == ',' || b == ':' || b == '\n' || b == '/' || b == '.' || b == '_' || b == '-':
		return 9
	default:
		return 4
	}
}

// index returns the offset of the first occurrence of patterns[k] in b,
// or -1. It looks for the pattern's anchor byte with bytes.IndexByte and
// compares the whole pattern where it is; past a few false hits per 16
// bytes scanned it hands the rest to bytes.Index, so an answer full of
// the anchor byte costs no more than bytes.Index alone.
func (s *patternSet) index(b []byte, k int) int {
	p, a := s.patterns[k], s.anchors[k]
	c := p[a]
	fails := 0
	for i := a; i < len(b); {
		j := bytes.IndexByte(b[i:], c)
		if j < 0 {
			return -1
		}
		start := i + j - a
		if start+len(p) > len(b) {
			return -1 // any later start ends further out
		}
		if bytes.Equal(b[start:start+len(p)], p) {
			return start
		}
		i += j + 1
		if fails++; fails > 4+i>>4 {
			if m := bytes.Index(b[start+1:], p); m >= 0 {
				return start + 1 + m
			}
			return -1
		}
	}
	return -1
}

// next returns the leftmost match of a pattern in b (the longest of
// those that start there) and the pattern's index, or -1.
func (s *patternSet) next(b []byte) (int, int) {
	at, k := -1, 0
	for i, p := range s.patterns {
		end := len(b)
		if at >= 0 {
			end = min(len(b), at+len(p))
		}
		if j := s.index(b[:end], i); j >= 0 && (at < 0 || j < at || (j == at && len(p) > len(s.patterns[k]))) {
			at, k = j, i
		}
	}
	return at, k
}

// partialTail returns the length of the longest end of b that is the
// beginning of a pattern, shorter than it: what must wait for more input.
// Nothing else is held back, so a streamed answer's last event is not
// kept waiting for the next.
func (s *patternSet) partialTail(b []byte) int {
	keep := 0
	for _, p := range s.patterns {
		for k := min(len(p)-1, len(b)); k > keep; k-- {
			if bytes.HasPrefix(p, b[len(b)-k:]) {
				keep = k
				break
			}
		}
	}
	return keep
}

// replace replaces, in place, every match in b that starts before limit,
// and returns how much of b is final: up to limit, or to the end of the
// last match when that reaches past it.
func (s *patternSet) replace(b []byte, limit int) int {
	i := 0
	for {
		at, k := s.next(b[i:])
		if at < 0 || i+at >= limit {
			break
		}
		copy(b[i+at:], s.with[k])
		i += at + len(s.patterns[k])
	}
	return max(i, limit)
}

// replacingBody is a response body in which every pattern of its set is
// replaced, as it streams, by its stand-in form: the stand-in, or the
// same encoding of the stand-in's pair. The agent sees back what it sent,
// and the body keeps its length, so its Content-Length holds.
//
// It reads into the caller's buffer and replaces there, so a byte is
// copied no more than a plain copy would; between reads it holds back
// only an end that could begin a pattern (shorter than the longest), so
// memory stays flat however long the body, and a streamed answer is not
// kept waiting.
//
// It is the proxy's own redaction, not the redactor's: what a bound host
// could send back is the value it was given, as it was given, and exact
// matching keeps a download near the speed of TLS, where the redactor's
// search for every derived form runs at a fraction of it. Whatever the
// agent's tools print still passes the bot's redaction boundary, with
// every form.
type replacingBody struct {
	src  io.ReadCloser
	set  *patternSet
	held []byte // read and scanned up to where a pattern could begin
	eof  bool
	// small is where a read too short to hold the held bytes and make
	// progress goes first; out[outPos:] is what of it is still to give.
	small  []byte
	out    []byte
	outPos int
}

// newReplacingBody returns src with set's patterns replaced.
func newReplacingBody(src io.ReadCloser, set *patternSet) *replacingBody {
	return &replacingBody{src: src, set: set}
}

func (b *replacingBody) Read(p []byte) (int, error) {
	if b.outPos < len(b.out) {
		n := copy(p, b.out[b.outPos:])
		b.outPos += n
		return n, nil
	}
	if len(p) > 2*b.set.longest {
		return b.fill(p)
	}
	if b.small == nil {
		b.small = make([]byte, max(4<<10, 4*b.set.longest))
	}
	n, err := b.fill(b.small)
	if err != nil {
		return 0, err
	}
	b.out, b.outPos = b.small[:n], 0
	c := copy(p, b.out)
	b.outPos = c
	return c, nil
}

// fill reads the source into p, behind what was held back, replaces
// what is final and returns its length; what could begin a pattern is
// held back again. p is longer than twice the longest pattern.
func (b *replacingBody) fill(p []byte) (int, error) {
	for {
		if b.eof && len(b.held) == 0 {
			return 0, io.EOF
		}
		h := copy(p, b.held)
		total := h
		if !b.eof {
			n, err := b.src.Read(p[h:])
			total += n
			if err == io.EOF {
				b.eof = true
			} else if err != nil {
				return 0, fmt.Errorf("credential proxy: read the answer: %w", err)
			}
		}
		keep := 0
		if !b.eof {
			keep = b.set.partialTail(p[:total])
		}
		final := b.set.replace(p[:total], total-keep)
		b.held = append(b.held[:0], p[final:total]...)
		if final > 0 {
			return final, nil
		}
	}
}

func (b *replacingBody) Close() error { return b.src.Close() }

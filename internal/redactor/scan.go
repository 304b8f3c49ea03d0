package redactor

import "unsafe"

// symbolBit marks, in Redactor.classes, the bytes the encoded channel
// keeps as symbols on a line without an offset column (all but
// whitespace), and breakBit the byte that ends such a line.
const (
	symbolBit = 1 << 8
	breakBit  = 1 << 9
)

// scanner is the state of a scan of both channels, carried from one piece
// of a stream to the next.
type scanner struct {
	raw int32    // the raw automaton's state
	enc encState // the encoded channel's state

	tail [fragCarry]byte // the stream's last tn bytes, for the fragment matcher
	tn   int
}

// scan runs both channels and the fragment matcher over s, which starts at
// position base of the stream, and appends the span of every match to
// rawSpans, encSpans and fragSpans (clipped to start at floor, see
// insertSpan and addFragSpan). Every match that ends in s is found. The
// spans only grow, so a scan without a match allocates nothing.
//
// The common case is one loop that steps the raw automaton (one dense-row
// lookup a byte) and gathers the encoded channel's symbols and their
// positions (two stores, no load that depends on the previous byte), so
// the processor overlaps the two. Whatever else happens at a byte (a raw
// match, a deep state, a line start, a dump column, a full symbol buffer)
// takes the general path for that byte alone, and so does every byte of a
// line with an offset column. The encoded matcher reads the gathered
// symbols at every few of them (see encMatcher), and the fragment matcher
// makes its own pass, which reads s at every few positions only (see
// fragMatcher).
func (r *Redactor) scan(sc *scanner, s string, base, floor int, rawSpans, encSpans, fragSpans []span) ([]span, []span, []span) {
	if len(s) == 0 {
		return rawSpans, encSpans, fragSpans
	}
	ra, e, m := r.raw, r.enc, r.frag
	rStride := int32(ra.stride)
	st := &sc.enc
	for i := 0; i < len(s); {
		if sc.raw < ra.nDense && st.mode == lineData && !st.ext && st.kind == kindPlain {
			row1 := sc.raw * rStride
			k := st.m
			for i < len(s) {
				c := s[i]
				cls := r.classes[c]
				v1 := ra.dense[row1+int32(cls&0xff)]
				if v1 < 0 || cls&breakBit != 0 || k == encBuf {
					break
				}
				st.syms[k] = c
				st.pos[k] = base + i
				k += int(cls >> 8 & 1)
				row1 = v1
				i++
			}
			st.n += k - st.m
			st.m = k
			sc.raw = row1 / rStride
			if i == len(s) {
				break
			}
		}
		c := s[i]
		sc.raw = ra.step(sc.raw, c, true)
		if ml := int(ra.matchLen[sc.raw]); ml > 0 {
			rawSpans = addSpan(rawSpans, base+i+1-ml, base+i+1, floor)
		}
		encSpans = e.one(st, c, base+i, floor, encSpans)
		i++
	}
	encSpans = e.match(st, base+len(s), -1, floor, encSpans)
	fragSpans = m.scan(sc, s, base, floor, fragSpans)
	return rawSpans, encSpans, fragSpans
}

// finish is the end of the stream at position end: see encChannel.finish.
func (r *Redactor) finish(sc *scanner, end, floor int, encSpans []span) []span {
	return r.enc.finish(&sc.enc, end, floor, encSpans)
}

// pending returns the earliest position, pos when none, from which a
// match may still cover the stream after pos bytes: the start of the
// longest ending that begins a raw pattern (a whole form or a fragment),
// or where the encoded channel's match in progress began.
func (r *Redactor) pending(sc *scanner, pos int) int {
	raw := max(int(r.raw.depth[sc.raw]), r.frag.prefixLen(unsafe.String(&sc.tail[0], sc.tn)))
	return min(pos-raw, r.enc.pending(&sc.enc, pos))
}

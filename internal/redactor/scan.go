package redactor

import "unsafe"

// specialBit marks, in Redactor.classes, the bytes the encoded channel does
// not match (whitespace and '|').
const specialBit = 1 << 16

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
// rawSpans, encSpans and fragSpans (clipped to start at floor, see addSpan
// and addFragSpan). The spans only grow, so a scan without a match
// allocates nothing.
//
// The common case is one pass with two table lookups a byte, one in each
// channel's dense rows: the two lookups do not depend on each other, so
// the processor overlaps them. Whatever else happens at a byte (a match, a
// deep state, a line start, a dump column, the end of a line) takes the
// general path for that byte alone, and so does every byte of a line with
// an offset column. The fragment matcher then makes its own pass, which
// reads s at every few positions only (see fragMatcher).
func (r *Redactor) scan(sc *scanner, s string, base, floor int, rawSpans, encSpans, fragSpans []span) ([]span, []span, []span) {
	if len(s) == 0 {
		return rawSpans, encSpans, fragSpans
	}
	ra, e, m := r.raw, r.enc, r.frag
	ea := e.a
	rStride, eStride := int32(ra.stride), int32(ea.stride)
	st := &sc.enc
	for i := 0; i < len(s); {
		if sc.raw < ra.nDense && st.state < ea.nDense && st.mode == lineData && !st.ext && st.kind == kindPlain {
			row1, row2 := sc.raw*rStride, st.state*eStride
			n := st.n
			for i < len(s) {
				c := s[i]
				cls := r.classes[c]
				v1 := ra.dense[row1+int32(cls&0xff)]
				if cls&specialBit != 0 {
					// A separator leaves the encoded state as it is,
					// unless the gap grows too long; a line end and '|'
					// go the general way.
					if v1 < 0 || c == '\n' || c == '|' || row2 != 0 && base+i-st.ring[(n-1)&ringMask] > maxGap {
						break
					}
					row1 = v1
					i++
					continue
				}
				v2 := ea.dense[row2+int32(cls>>8&0xff)]
				if v1|v2 < 0 {
					break
				}
				st.ring[n&ringMask] = base + i
				n++
				row1, row2 = v1, v2
				i++
			}
			sc.raw, st.state, st.n = row1/rStride, row2/eStride, n
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

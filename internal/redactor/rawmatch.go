package redactor

import "unsafe"

// scanRaw appends to spans every raw pattern that ends in s, which starts
// at position base of the stream (clipped to start at floor, see
// insertSpan): those that start in the stream's kept last bytes
// (sc.tail, kept only for a stream) and those in s. For a caller that
// needs pending (sc.partial), it then sets sc.rawPend to the length of the
// longest ending of the stream that begins a raw pattern.
func (r *Redactor) scanRaw(sc *scanner, s string, base, floor int, spans []span) []span {
	m := r.raw
	if len(sc.tail) > 0 {
		sc.join = append(append(sc.join[:0], sc.tail...), s[:min(len(s), m.maxLen-1)]...)
		spans = m.find(unsafe.String(&sc.join[0], len(sc.join)), base-len(sc.tail), len(sc.tail), len(sc.tail), floor, spans)
	}
	spans = m.find(s, base, len(s), 0, floor, spans)
	if !sc.partial {
		return spans
	}
	var last string
	if n := min(m.maxLen, len(sc.tail)+len(s)); len(s) < n {
		sc.join = append(append(sc.join[:0], sc.tail[len(sc.tail)-(n-len(s)):]...), s...)
		last = unsafe.String(&sc.join[0], len(sc.join))
	} else {
		last = s[len(s)-n:]
	}
	sc.rawPend = 0
	for i := range len(last) {
		if m.isPrefix(last[i:]) {
			sc.rawPend = len(last) - i
			break
		}
	}
	if sc.stream {
		keep := min(m.maxLen, len(sc.tail)+len(s))
		if len(s) >= keep {
			sc.tail = append(sc.tail[:0], s[len(s)-keep:]...)
		} else {
			sc.tail = append(sc.tail[:copy(sc.tail, sc.tail[len(sc.tail)-(keep-len(s)):])], s...)
		}
	}
	return spans
}

// find appends to spans every pattern that occurs in t, which starts at
// position base of the stream, starts before startEnd and ends after
// minEnd.
func (m *sampler) find(t string, base, startEnd, minEnd, floor int, spans []span) []span {
	// A pattern that starts before startEnd holds its first sample
	// before startEnd+stride-1.
	qEnd := min(len(t)-m.keyLen+1, startEnd+m.stride-1)
	bs, shift, mask, stride := m.bits, m.shift, m.keyMask, m.stride
	q := 0
	for ; q < qEnd && q+8 <= len(t); q += stride {
		k := load64(t, q) & mask
		if w, bit := probe64(k, shift); bs[w]&bit != bit {
			continue
		}
		spans = m.verify(t, base, q, k, startEnd, minEnd, floor, spans)
	}
	for ; q < qEnd; q += stride {
		k := keyOf(t[q:], m.keyLen)
		if w, bit := probe64(k, shift); bs[w]&bit != bit {
			continue
		}
		spans = m.verify(t, base, q, k, startEnd, minEnd, floor, spans)
	}
	return spans
}

// verify appends to spans every pattern that holds the key k, found at q
// in t, at an offset that puts its start before startEnd, its end after
// minEnd, and that occurs there.
func (m *sampler) verify(t string, base, q int, k uint64, startEnd, minEnd, floor int, spans []span) []span {
	for _, en := range m.entries(k) {
		p := q - int(en.off)
		pat := m.patterns[en.pat]
		end := p + len(pat)
		if p < 0 || p >= startEnd || end > len(t) || end <= minEnd || t[p:end] != pat {
			continue
		}
		spans = insertSpan(spans, base+p, base+end, floor)
	}
	return spans
}

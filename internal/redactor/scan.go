package redactor

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
	enc encState // the encoded channel's state

	stream  bool   // more pieces follow: keep tail
	partial bool   // the caller asks pending: keep rawPend
	tail    []byte // the stream's last bytes, up to the longest raw pattern
	join    []byte // scratch: tail and a piece joined
	rawPend int    // the longest ending of the stream that begins a raw pattern
}

// scan runs both channels over s, which starts at position base of the
// stream, and appends the span of every match that ends in s to rawSpans
// and encSpans (clipped to start at floor, see insertSpan). The spans only
// grow, so a scan without a match allocates nothing.
//
// Neither channel reads every byte through an automaton (see sampler). The
// one loop over every byte gathers the encoded channel's symbols and their
// positions: a class lookup and two stores a byte, nothing that depends on
// the byte before, so the processor runs several bytes at once. A line
// start, a dump column or a full symbol buffer takes the general path for
// that byte alone, and every byte of a line with an offset column does.
// The encoded channel then samples its symbols, and the raw channel
// samples s itself.
func (r *Redactor) scan(sc *scanner, s string, base, floor int, rawSpans, encSpans []span) ([]span, []span) {
	if len(s) == 0 {
		return rawSpans, encSpans
	}
	e := r.enc
	st := &sc.enc
	for i := 0; i < len(s); {
		if st.mode == lineStart && st.nDigits == 0 && !st.offsetSpace && plainStart(s[i:]) {
			// What the line-start rules would hold and then feed, the
			// gathering loop feeds at once.
			st.mode = lineData
		}
		if st.mode == lineData && !st.ext && st.kind == kindPlain {
			if i = st.gather(&r.classes, s, i, base); i == len(s) {
				break
			}
		}
		encSpans = e.one(st, s[i], base+i, floor, encSpans)
		i++
	}
	encSpans = e.match(st, base+len(s), -1, floor, encSpans)
	rawSpans = r.scanRaw(sc, s, base, floor, rawSpans)
	return rawSpans, encSpans
}

// plainStart reports whether the line that s starts begins with no offset
// column, as far as s shows: its leading blanks and up to maxOffsetDigits
// hex digits are followed by a byte that is neither ':' nor a space.
func plainStart(s string) bool {
	j := 0
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	d := 0
	for j+d < len(s) && d < maxOffsetDigits && isHexDigit(s[j+d]) {
		d++
	}
	return j+d < len(s) && s[j+d] != ':' && s[j+d] != ' '
}

// finish is the end of the stream at position end: see encChannel.finish.
func (r *Redactor) finish(sc *scanner, end, floor int, encSpans []span) []span {
	return r.enc.finish(&sc.enc, end, floor, encSpans)
}

// pending returns the earliest position, pos when none, from which a
// match may still cover the stream after pos bytes: the start of the
// longest ending that begins a raw pattern, or where the encoded channel's
// match in progress began. The scan must have been asked for it
// (scanner.partial).
func (r *Redactor) pending(sc *scanner, pos int) int {
	return min(pos-sc.rawPend, r.enc.pending(&sc.enc, pos))
}

// gather adds the symbols of s from i on, s starting at position base of
// the stream, up to the end of the line or of s, or until the buffer is
// full, and returns where it stopped. The line has no offset column and no
// covered rest (the caller checks), so every byte but whitespace is a
// symbol.
func (st *encState) gather(classes *[256]uint32, s string, i, base int) int {
	syms, pos := st.syms[:encBuf], st.pos[:encBuf]
	k := st.m
	for ; i < len(s) && k < encBuf; i++ {
		c := s[i]
		cls := classes[c]
		if cls&breakBit != 0 {
			break
		}
		syms[k] = c
		pos[k] = base + i
		k += int(cls & symbolBit >> 8)
	}
	st.n += k - st.m
	st.m = k
	return i
}

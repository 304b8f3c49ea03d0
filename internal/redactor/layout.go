package redactor

import (
	"encoding/binary"
	"slices"
	"unsafe"
)

// maxEncodedLen caps the length of an encoded pattern (longer forms are
// split into overlapping windows, see windows), so the positions of the
// symbols of any match in progress fit in a fixed ring.
const maxEncodedLen = 512

// maxGap is the longest run of skipped bytes (separators, an offset column,
// a dump's text column) allowed between two symbols of one match. A longer
// run ends any match in progress, which bounds what a Writer holds back.
const maxGap = 256

// maxOffsetDigits is the longest offset column recognised at a line start.
const maxOffsetDigits = 10

// maxTextColumn is the most bytes an xxd line dumps (its -c limit), and so
// the longest text column it writes.
const maxTextColumn = 256

// lineMode is where the encoded channel's scan is inside a line.
type lineMode uint8

const (
	lineStart lineMode = iota // leading blanks and a possible offset column
	lineData                  // symbols and separators
	lineText                  // a hex dump's text column, skipped up to the line end
)

// lineKind is the dump layout the current line's offset column announced.
type lineKind uint8

const (
	kindPlain  lineKind = iota // no offset column
	kindColon                  // "00000010:" (xxd): two spaces after data start the text column
	kindSpaced                 // "00000010  " (hexdump -C) or "0000020 " (od): '|' starts it
)

// encBlock is how many symbols the encoded channel gathers before it
// matches them; the ones that may still begin a match are kept for the next
// block.
const encBlock = 2048

// encBuf is the capacity of the symbol buffer: a block and what is kept.
const encBuf = encBlock + maxEncodedLen

// encChannel matches the encoded patterns (base64, base32, hex) in text
// whose symbols may be interleaved with separators, in the layouts of the
// standard dump tools. Bytes are skipped, not matched, when they are
// whitespace of any kind; an offset column at a line start (6 to 10 hex
// digits and ':' as xxd writes it, 7 octal digits and a space as od does
// on a dump's first line, offset 0, or after a line whose offset is
// smaller, 8 hex digits and two spaces as hexdump -C does); or the text column of a dump
// line (after two spaces following data on a line whose offset ends in
// ':', as xxd writes it; after '|' on a line whose offset ends in a space,
// as hexdump -C writes it). Every other byte is a symbol; one in no pattern
// ends any match in progress, and so does a run of more than maxGap
// skipped bytes. A match covers the original bytes from its first symbol to
// its last, every skipped byte between them included; one that ends on a
// line with an offset column also covers the rest of that line (its text
// column shows the same bytes), up to maxGap bytes.
//
// The channel gathers the symbols and their positions in a buffer (the
// byte loop that does it has no dependent loads, see Redactor.scan) and
// matches them with a sampler at the end of every block, of every
// piece of a stream, and of every line with an offset column (whose
// covered rest needs its matches found before the line end is passed).
type encChannel struct {
	m       *sampler
	special [256]bool // whitespace and '|': the scan's slow path decides
}

func newEncChannel(patterns []string) *encChannel {
	e := &encChannel{m: newSampler(patterns)}
	for _, c := range []byte(" \t\n\r\v\f|") {
		e.special[c] = true
	}
	return e
}

// encState is the state of one scan of the encoded channel, carried from
// one piece of a stream to the next.
type encState struct {
	n           int                   // symbols fed so far
	lineSyms    int                   // n at the start of the current line
	mode        lineMode              // the zero value: the stream starts a line
	kind        lineKind              // the current line's layout
	spaces      int                   // consecutive spaces just seen
	digits      [maxOffsetDigits]byte // hex digits at the line start, not fed yet
	nDigits     int
	digitsPos   int  // position of digits[0]
	offsetSpace bool // eight digits and one space seen at the line start
	dumpEnd     int  // symbols lineSyms to dumpEnd-1 were fed on a dump line
	ext         bool // a match ended on this dump line: the rest of it is covered
	extFrom     int  // where that match ended
	closeAt     int  // where the last covered rest ended, when !ext

	// A line that starts with seven octal digits and a space, as od's
	// does, and the offset they give: for the current line and the one
	// before it.
	curOd, prevOd           bool
	curOdValue, prevOdValue uint32

	// An xxd line's text column shows one character a byte of the line's
	// data (and a '\r' before a CRLF line end), so one longer than that is
	// none: its bytes are data after all. Until the line ends, textLen
	// counts its bytes but the leading blanks, up to textMax+1, and text
	// holds its symbols.
	textMax, textLen, nText int
	text                    [maxTextColumn + 2]byte
	textPos                 [maxTextColumn + 2]int

	// The symbol buffer: symbol base+i is syms[i], at position pos[i],
	// for i < m. Every match that ends before symbol matched has been
	// found.
	base, m, matched int
	syms             [encBuf + 8]byte // 8 more: a key is one 8-byte load
	pos              [encBuf]int
}

func octal(digits []byte) bool {
	for _, c := range digits {
		if c < '0' || c > '7' {
			return false
		}
	}
	return true
}

// octalValue returns the value of octal digits, which octal accepted.
func octalValue(digits []byte) uint32 {
	var v uint32
	for _, c := range digits {
		v = v<<3 | uint32(c-'0')
	}
	return v
}

func isHexDigit(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// one runs the channel on the byte c at pos.
func (e *encChannel) one(st *encState, c byte, pos, floor int, spans []span) []span {
	if st.mode == lineData && !st.ext && !e.special[c] {
		return e.feed(st, c, pos, floor, spans)
	}
	return e.slow(st, c, pos, floor, spans)
}

// slow handles one byte outside a run of symbols: the line-start offset
// column, separators, the text column, and the byte after them.
func (e *encChannel) slow(st *encState, c byte, pos, floor int, spans []span) []span {
	if st.ext && (c == '\n' || pos-st.extFrom >= maxGap) {
		spans = insertSpan(spans, st.extFrom, pos, floor)
		st.ext, st.closeAt = false, pos
	}
	if c == '\n' && st.dumpEnd > st.lineSyms {
		// A dump line ends: its matches, and the rest each covers, now.
		spans = e.match(st, pos, pos, floor, spans)
	}
	switch st.mode {
	case lineText:
		if c == '\n' {
			st.newLine()
			return spans
		}
		if st.kind != kindColon || st.textLen == 0 && (c == ' ' || c == '\t') {
			return spans
		}
		if st.textLen++; st.textLen <= st.textMax+1 {
			if !isSpace(c) {
				st.text[st.nText], st.textPos[st.nText] = c, pos
				st.nText++
			}
			return spans
		}
		// Longer than the line's data: no text column, and no dump line.
		if st.m+st.nText > encBuf {
			spans = e.block(st, pos, floor, spans)
		}
		st.kind, st.mode = kindPlain, lineData
		for j := range st.nText {
			spans = e.feed(st, st.text[j], st.textPos[j], floor, spans)
		}
		st.nText = 0
	case lineStart:
		if st.offsetSpace {
			// Eight digits and a space: a second space makes them
			// hexdump -C's offset column; anything else, data.
			st.offsetSpace = false
			st.mode = lineData
			if c == ' ' {
				st.kind = kindSpaced
				st.nDigits = 0
				return spans
			}
			spans = e.feedDigits(st, floor, spans)
			break
		}
		if st.nDigits == 0 && (c == ' ' || c == '\t') {
			return spans
		}
		if isHexDigit(c) && st.nDigits < maxOffsetDigits {
			if st.nDigits == 0 {
				st.digitsPos = pos
			}
			st.digits[st.nDigits] = c
			st.nDigits++
			return spans
		}
		switch {
		case c == ':' && st.nDigits >= 6:
			st.mode, st.kind, st.nDigits = lineData, kindColon, 0
			return spans
		case c == ' ' && st.nDigits == 7 && octal(st.digits[:7]):
			// Only od's layout: the first line of a dump (offset 0), or
			// one whose offset follows the previous line's. A hex cut's
			// last line may read like an offset too, and is data.
			v := octalValue(st.digits[:7])
			odLine := v == 0 || st.prevOd && v > st.prevOdValue
			st.curOd, st.curOdValue = true, v
			if odLine {
				st.mode, st.kind, st.nDigits = lineData, kindSpaced, 0
				return spans
			}
		case c == ' ' && st.nDigits == 8:
			st.offsetSpace = true
			return spans
		}
		st.mode = lineData
		spans = e.feedDigits(st, floor, spans)
	}
	switch c {
	case '\n':
		st.newLine()
	case ' ', '\t', '\r', '\v', '\f':
		if c == ' ' {
			st.spaces++
			if st.kind == kindColon && st.spaces >= 2 && st.n > st.lineSyms {
				if b := (st.n - st.lineSyms) / 2; b <= maxTextColumn {
					st.mode, st.textMax, st.textLen, st.nText = lineText, b, 0, 0
				} else {
					st.kind = kindPlain // more data than xxd writes on a line
				}
			}
		}
	case '|':
		if st.kind == kindSpaced {
			st.mode = lineText
			return spans
		}
		spans = e.feed(st, c, pos, floor, spans)
	default:
		spans = e.feed(st, c, pos, floor, spans)
	}
	return spans
}

// feedDigits feeds the digits held at the line start, which turned out not
// to be an offset column.
func (e *encChannel) feedDigits(st *encState, floor int, spans []span) []span {
	n := st.nDigits
	st.nDigits = 0
	for j := range n {
		spans = e.feed(st, st.digits[j], st.digitsPos+j, floor, spans)
	}
	return spans
}

// feed adds one symbol at pos.
func (e *encChannel) feed(st *encState, c byte, pos, floor int, spans []span) []span {
	if st.kind != kindPlain && !isHexDigit(c) {
		st.kind = kindPlain // a dump line holds only hex before its text column
	}
	st.spaces = 0
	if st.m == encBuf {
		spans = e.block(st, pos, floor, spans)
	}
	st.syms[st.m], st.pos[st.m] = c, pos
	st.m++
	st.n++
	if st.kind != kindPlain {
		st.dumpEnd = st.n
	}
	return spans
}

// block matches the full buffer, before the byte at pos is read, and keeps
// the symbols from which a match may still end later.
func (e *encChannel) block(st *encState, pos, floor int, spans []span) []span {
	spans = e.match(st, pos, -1, floor, spans)
	keep := min(st.m, e.m.maxLen)
	copy(st.syms[:keep], st.syms[st.m-keep:st.m])
	copy(st.pos[:keep], st.pos[st.m-keep:st.m])
	st.base += st.m - keep
	st.m = keep
	return spans
}

// match finds every match that ends after symbol st.matched and by the
// last symbol fed, the bytes before pos read. A match that ends on the
// current line when it is a dump line also covers the rest of that line,
// which ends at lineEnd, or when lineEnd is -1 has not ended before pos.
func (e *encChannel) match(st *encState, pos, lineEnd, floor int, spans []span) []span {
	m := e.m
	n := st.base + st.m
	lo := max(st.matched-m.maxLen+1, st.base)
	q := (lo + m.stride - 1) / m.stride * m.stride
	var dumpEnds []int // last symbols of matches on the dump line, rare
	syms := st.syms[:]
	for ; q+m.keyLen <= n; q += m.stride {
		k := binary.LittleEndian.Uint64(syms[q-st.base:]) & m.keyMask
		if w, mask := probe64(k, m.shift); m.bits[w]&mask != mask {
			continue
		}
		for _, en := range m.entries(k) {
			p := q - int(en.off)
			pat := m.patterns[en.pat]
			end := p + len(pat)
			if p < st.base || end > n || end <= st.matched || string(syms[p-st.base:end-st.base]) != pat {
				continue
			}
			if !st.connected(p, end) {
				continue
			}
			spans = insertSpan(spans, st.pos[p-st.base], st.pos[end-1-st.base]+1, floor)
			if end-1 >= st.lineSyms && end-1 < st.dumpEnd {
				dumpEnds = append(dumpEnds, end-1)
			}
		}
	}
	st.matched = n
	if len(dumpEnds) == 0 {
		return spans
	}
	// The covered rests, in the order of the matches' ends: one that
	// ends inside a covered rest changes nothing.
	slices.Sort(dumpEnds)
	for _, d := range dumpEnds {
		at := st.pos[d-st.base]
		if st.ext || at < st.closeAt {
			continue
		}
		from := at + 1
		switch {
		case lineEnd >= 0:
			st.closeAt = min(lineEnd, from+maxGap)
		case pos-from >= maxGap:
			st.closeAt = from + maxGap
		default:
			st.ext, st.extFrom = true, from
			continue
		}
		spans = insertSpan(spans, from, st.closeAt, floor)
	}
	return spans
}

// connected reports whether no more than maxGap bytes were skipped between
// any two of the symbols from start to end-1, which are in the buffer.
func (st *encState) connected(start, end int) bool {
	for i := start - st.base + 1; i < end-st.base; i++ {
		if st.pos[i]-st.pos[i-1]-1 > maxGap {
			return false
		}
	}
	return true
}

// finish feeds what the end of the stream, at end, decides: digits held at
// a line start are data, not an offset column, the last matches are found,
// and a dump line's covered rest ends there.
func (e *encChannel) finish(st *encState, end, floor int, spans []span) []span {
	if st.mode == lineStart && st.nDigits > 0 {
		st.mode, st.offsetSpace = lineData, false
		spans = e.feedDigits(st, floor, spans)
	}
	spans = e.match(st, end, end, floor, spans)
	if st.ext {
		spans = insertSpan(spans, st.extFrom, end, floor)
		st.ext, st.closeAt = false, end
	}
	return spans
}

// pending returns the earliest position from which a match may still
// cover the stream after pos bytes, pos when none can: the first symbol of
// the longest run of symbols at the end that begins a pattern (with no
// more than maxGap bytes skipped in it or after it), the digits held at a
// line start, or the covered rest of a dump line in progress.
func (e *encChannel) pending(st *encState, pos int) int {
	last := pos - 1 // the last byte read
	if st.nDigits > 0 {
		last = st.digitsPos - 1
		pos = min(pos, st.digitsPos)
	}
	if st.ext {
		pos = min(pos, st.extFrom)
	}
	if st.mode == lineText && st.nText > 0 {
		pos = min(pos, st.textPos[0]) // may yet be data
	}
	if st.m == 0 || last-st.pos[st.m-1] > maxGap {
		return pos
	}
	from := max(0, st.m-e.m.maxLen)
	for i := st.m - 1; i > from; i-- {
		if st.pos[i]-st.pos[i-1]-1 > maxGap {
			from = i
			break
		}
	}
	syms := unsafe.String(&st.syms[0], st.m)
	for i := from; i < st.m; i++ {
		if e.m.isPrefix(syms[i:]) {
			return min(pos, st.pos[i])
		}
	}
	return pos
}

// isSpace reports whether c is whitespace the encoded channel skips.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f'
}

func (st *encState) newLine() {
	st.prevOd, st.prevOdValue = st.curOd, st.curOdValue
	st.curOd = false
	st.nText = 0
	st.mode = lineStart
	st.kind = kindPlain
	st.spaces = 0
	st.lineSyms = st.n
	st.dumpEnd = st.n
}

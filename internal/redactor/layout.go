package redactor

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

// encChannel matches the encoded patterns (base64, base32, hex) in text
// whose symbols may be interleaved with separators, in the layouts of the
// standard dump tools. Bytes are skipped, not matched, when they are
// whitespace of any kind; an offset column at a line start (6 to 10 hex
// digits and ':' as xxd writes it, 7 octal digits and a space as od does,
// 8 hex digits and two spaces as hexdump -C does); or the text column of a dump
// line (after two spaces following data on a line whose offset ends in
// ':', as xxd writes it; after '|' on a line whose offset ends in a space,
// as hexdump -C writes it). Every other byte is a symbol; one in no pattern
// ends any match in progress, and so does a run of more than maxGap
// skipped bytes. A match covers the original bytes from its first symbol to
// its last, every skipped byte between them included; one that ends on a
// line with an offset column also covers the rest of that line (its text
// column shows the same bytes), up to maxGap bytes.
type encChannel struct {
	a       *automaton
	special [256]bool // whitespace and '|': the scan's slow path decides
}

func newEncChannel(patterns []string) *encChannel {
	e := &encChannel{a: newAutomaton(patterns)}
	for _, c := range []byte(" \t\n\r\v\f|") {
		e.special[c] = true
	}
	return e
}

// encState is the state of one scan of the encoded channel, carried from
// one piece of a stream to the next.
type encState struct {
	state       int32
	n           int                   // symbols fed so far
	ring        [maxEncodedLen]int    // position of symbol i at ring[i%maxEncodedLen]
	lineSyms    int                   // n at the start of the current line
	mode        lineMode              // the zero value: the stream starts a line
	kind        lineKind              // the current line's layout
	spaces      int                   // consecutive spaces just seen
	digits      [maxOffsetDigits]byte // hex digits at the line start, not fed yet
	nDigits     int
	digitsPos   int  // position of digits[0]
	offsetSpace bool // eight digits and one space seen at the line start
	ext         bool // a match ended on this dump line: the rest of it is covered
	extFrom     int  // where that match ended
}

const ringMask = maxEncodedLen - 1

func octal(digits []byte) bool {
	for _, c := range digits {
		if c < '0' || c > '7' {
			return false
		}
	}
	return true
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
		spans = addSpan(spans, st.extFrom, pos, floor)
		st.ext = false
	}
	switch st.mode {
	case lineText:
		if c == '\n' {
			st.newLine()
		}
		st.skip(pos)
		return spans
	case lineStart:
		if st.offsetSpace {
			// Eight digits and a space: a second space makes them
			// hexdump -C's offset column; anything else, data.
			st.offsetSpace = false
			st.mode = lineData
			if c == ' ' {
				st.kind = kindSpaced
				st.nDigits = 0
				st.skip(pos)
				return spans
			}
			spans = e.feedDigits(st, floor, spans)
			st.skip(pos - 1)
			break
		}
		if st.nDigits == 0 && (c == ' ' || c == '\t') {
			st.skip(pos)
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
			st.skip(pos)
			return spans
		case c == ' ' && st.nDigits == 7 && octal(st.digits[:7]):
			st.mode, st.kind, st.nDigits = lineData, kindSpaced, 0
			st.skip(pos)
			return spans
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
		st.skip(pos)
	case ' ', '\t', '\r', '\v', '\f':
		if c == ' ' {
			st.spaces++
			if st.kind == kindColon && st.spaces >= 2 && st.n > st.lineSyms {
				st.mode = lineText
			}
		}
		st.skip(pos)
	case '|':
		if st.kind == kindSpaced {
			st.mode = lineText
			st.skip(pos)
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

// feed runs the automaton on one symbol at pos.
func (e *encChannel) feed(st *encState, c byte, pos, floor int, spans []span) []span {
	if st.kind != kindPlain && !isHexDigit(c) {
		st.kind = kindPlain // a dump line holds only hex before its text column
	}
	st.spaces = 0
	st.ring[st.n&ringMask] = pos
	st.n++
	st.state = e.a.step(st.state, c, true)
	if ml := int(e.a.matchLen[st.state]); ml > 0 {
		spans = addSpan(spans, st.ring[(st.n-ml)&ringMask], pos+1, floor)
		if st.kind != kindPlain && !st.ext {
			st.ext, st.extFrom = true, pos+1
		}
	}
	return spans
}

// finish feeds what the end of the stream, at end, decides: digits held at
// a line start are data, not an offset column, and a dump line's covered
// rest ends there.
func (e *encChannel) finish(st *encState, end, floor int, spans []span) []span {
	if st.mode == lineStart && st.nDigits > 0 {
		st.mode, st.offsetSpace = lineData, false
		spans = e.feedDigits(st, floor, spans)
	}
	if st.ext {
		spans = addSpan(spans, st.extFrom, end, floor)
		st.ext = false
	}
	return spans
}

// pending returns the earliest position from which a match may still
// cover the stream, pos when none can: the first symbol of the match in
// progress, or the digits held at a line start.
func (e *encChannel) pending(st *encState, pos int) int {
	if d := int(e.a.depth[st.state]); d > 0 {
		pos = min(pos, st.ring[(st.n-d)&ringMask])
	}
	if st.nDigits > 0 {
		pos = min(pos, st.digitsPos)
	}
	if st.ext {
		pos = min(pos, st.extFrom)
	}
	return pos
}

func (st *encState) newLine() {
	st.mode = lineStart
	st.kind = kindPlain
	st.spaces = 0
	st.lineSyms = st.n
}

// skip records a skipped byte at pos; one too many in a row ends the match
// in progress.
func (st *encState) skip(pos int) {
	if st.state != 0 && pos-st.ring[(st.n-1)&ringMask] > maxGap {
		st.state = 0
	}
}

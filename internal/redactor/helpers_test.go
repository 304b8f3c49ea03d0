package redactor

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// naiveRedact is the reference implementation: it finds every occurrence
// of every raw pattern with strings.Index, every occurrence of every encoded
// pattern with strings.Index over the symbols refSymbols keeps, merges
// overlapping or touching ranges and replaces each union with Token.
func naiveRedact(ps patternSet, s string) string {
	var spans []span
	for _, p := range ps.raw {
		for from := 0; from <= len(s)-len(p); {
			i := strings.Index(s[from:], p)
			if i < 0 {
				break
			}
			spans = append(spans, span{from + i, from + i + len(p)})
			from += i + 1
		}
	}
	syms, pos, lines := refLayout(s)
	var ends []int // symbol index of the last symbol of each encoded match
	for _, p := range ps.encoded {
		for from := 0; from <= len(syms)-len(p); {
			i := strings.Index(syms[from:], p)
			if i < 0 {
				break
			}
			spans = append(spans, span{pos[from+i], pos[from+i+len(p)-1] + 1})
			ends = append(ends, from+i+len(p)-1)
			from += i + 1
		}
	}
	// A match that ends on a line with an offset column covers the rest
	// of the line, up to maxGap bytes; one that ends inside such a covered
	// rest changes nothing.
	slices.Sort(ends)
	closeAt := -1
	for _, e := range ends {
		if !lines[e].dump || pos[e] < closeAt {
			continue
		}
		from := pos[e] + 1
		closeAt = min(lines[e].end, from+maxGap)
		spans = append(spans, span{from, closeAt})
	}
	if len(spans) == 0 {
		return s
	}
	slices.SortFunc(spans, func(a, b span) int { return a.start - b.start })
	var b strings.Builder
	last, cur := 0, spans[0]
	flush := func() {
		b.WriteString(s[last:cur.start])
		b.WriteString(Token)
		last = cur.end
	}
	for _, sp := range spans[1:] {
		if sp.start <= cur.end {
			cur.end = max(cur.end, sp.end)
			continue
		}
		flush()
		cur = sp
	}
	flush()
	b.WriteString(s[last:])
	return b.String()
}

// refSymbols is the reference for the encoded channel's view of s, written
// line by line as the layout rules read: the symbols it matches, each with
// its position in s, and a NUL (in no encoded pattern) wherever more than
// maxGap bytes were skipped between two symbols.
func refSymbols(s string) (string, []int) {
	syms, pos, _ := refLayout(s)
	return syms, pos
}

// refLine is what refLayout tells of the line of a symbol: where it ends
// (its '\n', or the end of the text) and whether it is a dump line there
// (an offset column, and only hex digits in its data so far).
type refLine struct {
	end  int
	dump bool
}

// refLayout is refSymbols with the line of each symbol.
func refLayout(s string) (string, []int, []refLine) {
	var syms []byte
	var pos []int
	var lines []refLine
	last := -1
	var info refLine
	// od's offset column: the line before began with seven octal digits
	// and a space (prevOd), giving the offset prevOdValue.
	prevOd, prevOdValue := false, uint64(0)
	add := func(c byte, p int) {
		if last >= 0 && p-last-1 > maxGap {
			syms, pos, lines = append(syms, 0), append(pos, p), append(lines, info)
		}
		syms, pos, lines = append(syms, c), append(pos, p), append(lines, info)
		last = p
	}
	for start := 0; start < len(s); {
		end := strings.IndexByte(s[start:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += start
		}
		line := s[start:end]
		j := 0
		for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
			j++
		}
		d := 0
		for j+d < len(line) && isHexDigit(line[j+d]) {
			d++
		}
		kind := kindPlain
		curOd, curOdValue := false, uint64(0)
		if j+d < len(line) && d == 7 && line[j+d] == ' ' && strings.Trim(line[j:j+d], "01234567") == "" {
			curOd = true
			curOdValue, _ = strconv.ParseUint(line[j:j+d], 8, 32)
		}
		if j+d < len(line) {
			switch c := line[j+d]; {
			case c == ':' && d >= 6 && d <= maxOffsetDigits:
				kind, j = kindColon, j+d+1
			case curOd && (curOdValue == 0 || prevOd && curOdValue > prevOdValue):
				kind, j = kindSpaced, j+d+1
			case c == ' ' && d == 8 && j+d+1 < len(line) && line[j+d+1] == ' ':
				kind, j = kindSpaced, j+d+2
			}
		}
		info = refLine{end: end, dump: kind != kindPlain}
		spaces, onLine := 0, 0
	data:
		for ; j < len(line); j++ {
			switch c := line[j]; c {
			case ' ', '\t', '\r', '\v', '\f':
				if c == ' ' {
					spaces++
					if kind == kindColon && spaces >= 2 && onLine > 0 {
						// A text column shows one character a byte of
						// the data: one longer is data too.
						if onLine/2 <= maxTextColumn && textColumnFits(line[j+1:], onLine/2) {
							break data
						}
						kind = kindPlain
						info.dump = false
					}
				}
			case '|':
				if kind == kindSpaced {
					break data
				}
				fallthrough
			default:
				if kind != kindPlain && !isHexDigit(c) {
					kind = kindPlain
					info.dump = false
				}
				spaces = 0
				onLine++
				add(c, start+j)
			}
		}
		start = end + 1
		prevOd, prevOdValue = curOd, curOdValue
	}
	return string(syms), pos, lines
}

// textColumnFits reports whether s (a line's rest after two spaces) may
// be the text column of an xxd line with b bytes of data: its bytes less
// the leading blanks are at most b, and a '\r'.
func textColumnFits(s string, b int) bool {
	return len(strings.TrimLeft(s, " \t")) <= b+1
}

// refUndecided returns the first symbol of an xxd text column that the
// last line of s (no line end yet) may still show to be data, being no
// longer than the line's data so far, or -1 when there is none.
func refUndecided(s string) int {
	start := strings.LastIndexByte(s, '\n') + 1
	line := s[start:]
	j := 0
	for j < len(line) && (line[j] == ' ' || line[j] == '\t') {
		j++
	}
	d := 0
	for j+d < len(line) && isHexDigit(line[j+d]) {
		d++
	}
	if d < 6 || d > maxOffsetDigits || j+d >= len(line) || line[j+d] != ':' {
		return -1
	}
	spaces, onLine := 0, 0
	for k := j + d + 1; k < len(line); k++ {
		switch c := line[k]; c {
		case ' ', '\t', '\r', '\v', '\f':
			if c != ' ' {
				continue
			}
			spaces++
			if spaces < 2 || onLine == 0 {
				continue
			}
			if onLine/2 > maxTextColumn || !textColumnFits(line[k+1:], onLine/2) {
				return -1
			}
			for i := k + 1; i < len(line); i++ {
				if !isSpace(line[i]) {
					return start + i
				}
			}
			return -1
		default:
			if !isHexDigit(c) {
				return -1
			}
			spaces = 0
			onLine++
		}
	}
	return -1
}

// leak names the way secret, or its \n / \r\n variant, survives in out:
// raw, or in a run of out that decodes back to it (base64 in either
// alphabet at any alignment, base32, hex in either case, each also with
// separators and dump columns between its characters as refSymbols reads
// them; percent-encoding, JSON escaping, UTF-16LE and BE), or as a fragment
// (one of the runs fragments lists) raw or in hex. Only the text between
// tokens is searched. It returns "" when nothing survives.
func leak(out, secret string) string {
	variants := []string{secret}
	if strings.ContainsAny(secret, "\r\n") {
		// A variant shorter than MinimumSecretLength is no pattern, as no
		// such secret is ("000\r\n000" has the 7-byte "000\n000"):
		// matching one would redact runs such as "\n\n\n\n".
		lf := strings.ReplaceAll(secret, "\r\n", "\n")
		for _, v := range []string{lf, strings.ReplaceAll(lf, "\n", "\r\n")} {
			if len(v) >= MinimumSecretLength {
				variants = append(variants, v)
			}
		}
	}
	frags := fragments(secret, fragmentLen(len(secret)))
	holds := func(text string) bool {
		for _, v := range variants {
			if strings.Contains(text, v) {
				return true
			}
		}
		return false
	}
	holdsFragment := func(text string) bool {
		for _, f := range frags {
			if strings.Contains(text, f) {
				return true
			}
		}
		return false
	}
	for _, piece := range strings.Split(out, Token) {
		if holds(piece) {
			return "raw"
		}
		if holdsFragment(piece) {
			return "a raw fragment"
		}
		syms, _ := refSymbols(piece)
		for _, text := range []string{piece, syms} {
			if how := encodedLeak(text, holds, holdsFragment); how != "" {
				return how
			}
		}
		if holds(percentDecode(piece, false)) || holds(percentDecode(piece, true)) {
			return "percent"
		}
		if holds(jsonDecode(piece)) {
			return "json"
		}
		for off := range 2 {
			for _, order := range []binary.ByteOrder{binary.LittleEndian, binary.BigEndian} {
				if holds(utf16Decode(piece[min(off, len(piece)):], order)) {
					return "utf-16"
				}
			}
		}
	}
	return ""
}

// encodedLeak looks for runs of text that decode (base64, base32, hex)
// to something holds accepts, or (hex) to a fragment.
func encodedLeak(text string, holds, holdsFragment func(string) bool) string {
	for _, alpha := range []struct {
		name, chars string
		enc         *base64.Encoding
	}{
		{"base64-std", "+/", base64.RawStdEncoding},
		{"base64-url", "-_", base64.RawURLEncoding},
	} {
		for _, run := range runs(text, func(c byte) bool { return isAlnum(c) || strings.IndexByte(alpha.chars, c) >= 0 }) {
			for off := range 4 {
				if len(run) < off {
					break
				}
				r := run[off:]
				r = r[:len(r)/4*4]
				if dec, err := alpha.enc.DecodeString(r); err == nil && holds(string(dec)) {
					return alpha.name
				}
			}
		}
	}
	b32 := base32.StdEncoding.WithPadding(base32.NoPadding)
	for _, run := range runs(text, func(c byte) bool { return 'A' <= c && c <= 'Z' || '2' <= c && c <= '7' }) {
		for off := range 8 {
			if len(run) < off {
				break
			}
			r := run[off:]
			r = r[:len(r)/8*8]
			if dec, err := b32.DecodeString(r); err == nil && holds(string(dec)) {
				return "base32"
			}
		}
	}
	for _, isHex := range []func(byte) bool{
		func(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' },
		func(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' },
	} {
		for _, run := range runs(text, isHex) {
			for off := range 2 {
				if len(run) < off {
					break
				}
				r := run[off:]
				r = r[:len(r)/2*2]
				if dec, err := hex.DecodeString(r); err == nil {
					if holds(string(dec)) {
						return "hex"
					}
					if holdsFragment(string(dec)) {
						return "a hex fragment"
					}
				}
			}
		}
	}
	return ""
}

// utf16Decode decodes s as UTF-16 in the given byte order (a last odd byte
// is dropped; unpaired surrogates become U+FFFD).
func utf16Decode(s string, order binary.ByteOrder) string {
	units := make([]uint16, len(s)/2)
	for i := range units {
		units[i] = order.Uint16([]byte(s[2*i : 2*i+2]))
	}
	return string(utf16.Decode(units))
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// runs returns the maximal runs of s whose bytes satisfy in.
func runs(s string, in func(byte) bool) []string {
	var out []string
	start := -1
	for i := 0; i <= len(s); i++ {
		if i < len(s) && in(s[i]) {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			out = append(out, s[start:i])
			start = -1
		}
	}
	return out
}

// percentDecode decodes every valid %XX in s (either case), and '+' as a
// space when plus is set, leaving everything else as it is.
func percentDecode(s string, plus bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteByte(byte(v))
				i += 2
				continue
			}
		}
		if plus && s[i] == '+' {
			b.WriteByte(' ')
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// jsonDecode decodes every valid JSON string escape in s, leaving
// everything else as it is.
func jsonDecode(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		if r, ok := map[byte]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}[s[i+1]]; ok {
			b.WriteByte(r)
			i++
			continue
		}
		if s[i+1] == 'u' && i+6 <= len(s) {
			if v, err := strconv.ParseUint(s[i+2:i+6], 16, 16); err == nil {
				r := rune(v)
				i += 5
				if utf16.IsSurrogate(r) && i+7 <= len(s) && s[i+1] == '\\' && s[i+2] == 'u' {
					if v2, err := strconv.ParseUint(s[i+3:i+7], 16, 16); err == nil {
						r = utf16.DecodeRune(r, rune(v2))
						i += 6
					}
				}
				b.WriteRune(r)
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// mismatch describes how got differs from want without printing either
// (they may hold secrets): lengths, the first differing byte offset and the
// token counts. It returns "" when they are equal.
func mismatch(want, got string) string {
	if want == got {
		return ""
	}
	i := commonPrefix(want, got)
	return fmt.Sprintf("want length %d with %d tokens, got length %d with %d tokens; first difference at byte %d",
		len(want), strings.Count(want, Token), len(got), strings.Count(got, Token), i)
}

// holdBound is the most a Writer of r may hold back: the longest raw
// pattern less one byte, or an encoded match in progress (its symbols, each
// after at most maxGap skipped bytes, up to maxOffsetDigits digits held at
// a line start, and an xxd text column that may yet be data).
func holdBound(r *Redactor) int {
	bound := 0
	if r.raw != nil {
		bound = r.raw.maxLen - 1
	}
	if r.enc != nil {
		bound = max(bound, (r.enc.m.maxLen-1)*(maxGap+1)+maxGap+maxOffsetDigits+maxTextColumn+1)
	}
	return bound
}

// commonPrefix returns the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	return n
}

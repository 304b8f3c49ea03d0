package redactor

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf16"
)

// naiveRedact is the reference implementation: it finds every occurrence
// of every pattern with strings.Index, merges overlapping or touching
// ranges and replaces each union with Token.
func naiveRedact(patterns []string, s string) string {
	var spans []span
	for _, p := range patterns {
		for from := 0; from <= len(s)-len(p); {
			i := strings.Index(s[from:], p)
			if i < 0 {
				break
			}
			spans = append(spans, span{from + i, from + i + len(p)})
			from += i + 1
		}
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

// leak names the way secret, or its \n / \r\n variant, survives in out:
// raw, or in a run of out that decodes back to it (base64 in either
// alphabet at any alignment, hex in either case, percent-encoding, JSON
// escaping). Only the text between tokens is searched. It returns "" when
// nothing survives.
func leak(out, secret string) string {
	variants := []string{secret}
	if strings.ContainsAny(secret, "\r\n") {
		lf := strings.ReplaceAll(secret, "\r\n", "\n")
		variants = append(variants, lf, strings.ReplaceAll(lf, "\n", "\r\n"))
	}
	holds := func(text string) bool {
		for _, v := range variants {
			if strings.Contains(text, v) {
				return true
			}
		}
		return false
	}
	for _, frag := range strings.Split(out, Token) {
		if holds(frag) {
			return "raw"
		}
		for _, alpha := range []struct {
			name, chars string
			enc         *base64.Encoding
		}{
			{"base64-std", "+/", base64.RawStdEncoding},
			{"base64-url", "-_", base64.RawURLEncoding},
		} {
			for _, run := range runs(frag, func(c byte) bool { return isAlnum(c) || strings.IndexByte(alpha.chars, c) >= 0 }) {
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
		for _, isHex := range []func(byte) bool{
			func(c byte) bool { return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' },
			func(c byte) bool { return '0' <= c && c <= '9' || 'A' <= c && c <= 'F' },
		} {
			for _, run := range runs(frag, isHex) {
				for off := range 2 {
					if len(run) < off {
						break
					}
					r := run[off:]
					r = r[:len(r)/2*2]
					if dec, err := hex.DecodeString(r); err == nil && holds(string(dec)) {
						return "hex"
					}
				}
			}
		}
		if holds(percentDecode(frag, false)) || holds(percentDecode(frag, true)) {
			return "percent"
		}
		if holds(jsonDecode(frag)) {
			return "json"
		}
	}
	return ""
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

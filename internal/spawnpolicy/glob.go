package spawnpolicy

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// pattern is a compiled Deny or Allow entry: an explicit name, or a glob in
// which "*" matches any run of characters. It matches a whole variable name,
// case-insensitively (Unicode simple folding, as strings.EqualFold).
type pattern struct {
	// source is the entry as configured, for Explain.
	source string
	// glob is true when source contains "*".
	glob bool
	// segs are the pieces between the stars, ASCII-lowercased once at
	// compile time; an explicit name is one segment.
	segs []string
}

// compilePattern compiles one validated Deny or Allow entry.
func compilePattern(entry string) pattern {
	lowered := lowerASCII(entry)
	if !isGlob(entry) {
		return pattern{source: entry, segs: []string{lowered}}
	}
	return pattern{source: entry, glob: true, segs: strings.Split(lowered, "*")}
}

// match reports whether the whole of name matches p. Every character of a
// segment matches exactly one character of name, so the first segment can
// only match at the start and the last only at the end: both are checked
// before the middle segments are searched, leftmost first, between them.
func (p *pattern) match(name string) bool {
	n, ok := prefixFold(name, p.segs[0])
	if !ok {
		return false
	}
	if !p.glob {
		return n == len(name)
	}
	last := len(p.segs) - 1
	start, ok := suffixFold(name[n:], p.segs[last])
	if !ok {
		return false
	}
	rest := name[n : n+start]
	for _, seg := range p.segs[1:last] {
		if seg == "" {
			continue
		}
		end := indexEndFold(rest, seg)
		if end < 0 {
			return false
		}
		rest = rest[end:]
	}
	return true
}

// isGlob reports whether a Deny or Allow entry is a glob.
func isGlob(entry string) bool {
	return strings.IndexByte(entry, '*') >= 0
}

// equalFold reports whether two names are equal ignoring case, the way every
// Deny and Allow entry matches.
func equalFold(a, b string) bool {
	return strings.EqualFold(a, b)
}

// invalidPatternChar returns the first character of a Deny or Allow entry
// that no variable name can hold ("*" is the wildcard and allowed): "=",
// NUL and other control characters, white space, and bytes that are not
// UTF-8.
func invalidPatternChar(entry string) (rune, bool) {
	for i, r := range entry {
		if r == utf8.RuneError {
			if _, size := utf8.DecodeRuneInString(entry[i:]); size == 1 {
				return r, true
			}
		}
		if r == '=' || unicode.IsControl(r) || unicode.IsSpace(r) {
			return r, true
		}
	}
	return 0, false
}

// lowerASCII returns s with A to Z lowered; every other byte is kept, so the
// result has the same runes, one for one, as s.
func lowerASCII(s string) string {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// prefixFold reports whether s starts with prefix (ASCII-lowercased),
// ignoring case, and how many bytes of s the match covers.
func prefixFold(s, prefix string) (int, bool) {
	i, j := 0, 0
	for j < len(prefix) {
		if i >= len(s) {
			return 0, false
		}
		a, b := s[i], prefix[j]
		if a < utf8.RuneSelf && b < utf8.RuneSelf {
			if 'A' <= a && a <= 'Z' {
				a += 'a' - 'A'
			}
			if a != b {
				return 0, false
			}
			i++
			j++
			continue
		}
		ra, na := utf8.DecodeRuneInString(s[i:])
		rb, nb := utf8.DecodeRuneInString(prefix[j:])
		if !foldEqual(ra, rb) {
			return 0, false
		}
		i += na
		j += nb
	}
	return i, true
}

// suffixFold reports whether s ends with suffix (ASCII-lowercased),
// ignoring case, and where in s the match starts.
func suffixFold(s, suffix string) (int, bool) {
	i, j := len(s), len(suffix)
	for j > 0 {
		if i <= 0 {
			return 0, false
		}
		a, b := s[i-1], suffix[j-1]
		if a < utf8.RuneSelf && b < utf8.RuneSelf {
			if 'A' <= a && a <= 'Z' {
				a += 'a' - 'A'
			}
			if a != b {
				return 0, false
			}
			i--
			j--
			continue
		}
		ra, na := utf8.DecodeLastRuneInString(s[:i])
		rb, nb := utf8.DecodeLastRuneInString(suffix[:j])
		if !foldEqual(ra, rb) {
			return 0, false
		}
		i -= na
		j -= nb
	}
	return i, true
}

// indexEndFold returns the end, in s, of the leftmost case-insensitive match
// of seg (ASCII-lowercased), or -1 when there is none. Taking the leftmost
// match is what makes a "*" glob match greedily and still correctly.
func indexEndFold(s, seg string) int {
	for i := 0; i < len(s); {
		if n, ok := prefixFold(s[i:], seg); ok {
			return i + n
		}
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return -1
}

// foldEqual reports whether two runes are equal under Unicode simple case
// folding, as strings.EqualFold compares them.
func foldEqual(a, b rune) bool {
	if a == b {
		return true
	}
	if b < a {
		a, b = b, a
	}
	r := unicode.SimpleFold(a)
	for r != a && r < b {
		r = unicode.SimpleFold(r)
	}
	return r == b
}

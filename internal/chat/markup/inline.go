package markup

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// renderInline renders the inline Markdown of s; inLink forbids nested links.
func renderInline(s string, inLink bool) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		switch c {
		case '\\':
			if i+1 < len(s) && strings.IndexByte(escapable, s[i+1]) >= 0 {
				writeEscaped(&b, s[i+1:i+2])
				i += 2
				continue
			}
		case '`':
			n := runLength(s, i, '`')
			if end := codeSpanEnd(s, i, n); end >= 0 {
				b.WriteString("<code>")
				writeEscaped(&b, trimCodeSpan(s[i+n:end-n]))
				b.WriteString("</code>")
				i = end
				continue
			}
			writeEscaped(&b, s[i:i+n])
			i += n
			continue
		case '!':
			// An image shows as a link to it (Telegram has no inline
			// images), without the "!" left in front.
			if i+1 < len(s) && s[i+1] == '[' {
				if html, end, ok := renderLink(s, i+1, inLink); ok {
					b.WriteString(html)
					i = end
					continue
				}
			}
		case '[':
			if html, end, ok := renderLink(s, i, inLink); ok {
				b.WriteString(html)
				i = end
				continue
			}
		case '<':
			if html, end, ok := renderAutolink(s, i, inLink); ok {
				b.WriteString(html)
				i = end
				continue
			}
		case '*', '_', '~':
			html, end := renderEmphasis(s, i, inLink)
			b.WriteString(html)
			i = end
			continue
		}
		writeEscaped(&b, s[i:i+1])
		i++
	}
	return b.String()
}

// escapable lists the characters a backslash escapes.
const escapable = "\\`*_~[](){}#+-.!|>"

// codeSpanEnd returns the index just past the run of exactly n backticks
// that closes the code span opened at i, or -1.
func codeSpanEnd(s string, i, n int) int {
	for j := i + n; j < len(s); {
		if s[j] != '`' {
			j++
			continue
		}
		m := runLength(s, j, '`')
		if m == n {
			return j + m
		}
		j += m
	}
	return -1
}

// trimCodeSpan strips one space from both ends of a code span that has one
// on each side and is not all spaces, as CommonMark does.
func trimCodeSpan(code string) string {
	if len(code) >= 2 && code[0] == ' ' && code[len(code)-1] == ' ' && strings.TrimSpace(code) != "" {
		return code[1 : len(code)-1]
	}
	return code
}

// renderLink renders the [text](url) link that starts at i.
func renderLink(s string, i int, inLink bool) (string, int, bool) {
	if inLink {
		return "", 0, false
	}
	closeText := matchingBracket(s, i)
	if closeText < 0 || closeText+1 >= len(s) || s[closeText+1] != '(' {
		return "", 0, false
	}
	depth := 0
	for j := closeText + 2; j < len(s); j++ {
		switch s[j] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
				continue
			}
			url := s[closeText+2 : j]
			text := s[i+1 : closeText]
			if url == "" {
				return "", 0, false
			}
			return linkHTML(text, url), j + 1, true
		case ' ', '\t', '\n':
			return "", 0, false
		}
	}
	return "", 0, false
}

// matchingBracket returns the index of the "]" that closes the "[" at i.
func matchingBracket(s string, i int) int {
	depth := 0
	for j := i; j < len(s); j++ {
		switch s[j] {
		case '\\':
			j++
		case '[':
			depth++
		case ']':
			depth--
			if depth == 0 {
				return j
			}
		}
	}
	return -1
}

func linkHTML(text, url string) string {
	if !linkable(url) {
		return renderInline(text, false) + " (" + escapeText(url) + ")"
	}
	if strings.TrimSpace(text) == "" {
		text = url
	}
	return `<a href="` + escapeAttr(url) + `">` + renderInline(text, true) + "</a>"
}

// linkable reports whether Telegram makes a link of url.
func linkable(url string) bool {
	lower := strings.ToLower(url)
	for _, scheme := range []string{"http://", "https://", "tg://", "mailto:"} {
		if strings.HasPrefix(lower, scheme) && len(lower) > len(scheme) {
			return true
		}
	}
	return false
}

// renderAutolink renders the <https://...> autolink that starts at i.
func renderAutolink(s string, i int, inLink bool) (string, int, bool) {
	end := strings.IndexByte(s[i:], '>')
	if inLink || end < 0 {
		return "", 0, false
	}
	url := s[i+1 : i+end]
	if !linkable(url) || strings.ContainsAny(url, " \t\n<") {
		return "", 0, false
	}
	return `<a href="` + escapeAttr(url) + `">` + escapeText(url) + "</a>", i + end + 1, true
}

// renderEmphasis renders the emphasis that the run of markers at i opens, or
// the run as literal text, and returns the index after what it consumed.
func renderEmphasis(s string, i int, inLink bool) (string, int) {
	c := s[i]
	n := runLength(s, i, c)
	if n >= 2 {
		if html, end, ok := emphasisAt(s, i, s[i:i+2], inLink); ok {
			return html, end
		}
	}
	if c != '~' {
		if html, end, ok := emphasisAt(s, i+n-1, s[i:i+1], inLink); ok {
			return escapeText(s[i:i+n-1]) + html, end
		}
	}
	return escapeText(s[i : i+n]), i + n
}

// emphasisAt renders the emphasis opened by delim at i, when it has a closer.
func emphasisAt(s string, i int, delim string, inLink bool) (string, int, bool) {
	c := delim[0]
	after := i + len(delim)
	if after >= len(s) || unicode.IsSpace(rune(s[after])) {
		return "", 0, false
	}
	if c == '_' && i > 0 {
		if r, _ := utf8.DecodeLastRuneInString(s[:i]); isWordRune(r) {
			return "", 0, false
		}
	}
	closer := findCloser(s, after, delim)
	if closer < 0 {
		return "", 0, false
	}
	tag := "i"
	switch {
	case c == '~':
		tag = "s"
	case len(delim) == 2:
		tag = "b"
	}
	return "<" + tag + ">" + renderInline(s[after:closer], inLink) + "</" + tag + ">", closer + len(delim), true
}

// findCloser returns the index of the delimiter that closes delim in s,
// searching from from, or -1. Code spans and escaped characters are skipped;
// a single-character delimiter skips runs of two or more (nested strong
// emphasis), and a run of three or more closes a double delimiter with its
// last two characters.
func findCloser(s string, from int, delim string) int {
	c := delim[0]
	for j := from; j < len(s); {
		switch s[j] {
		case '\\':
			j += 2
			continue
		case '`':
			n := runLength(s, j, '`')
			if end := codeSpanEnd(s, j, n); end >= 0 {
				j = end
				continue
			}
			j += n
			continue
		case c:
			n := runLength(s, j, c)
			if j > from && !unicode.IsSpace(rune(s[j-1])) && closesWord(s, j+n, c) {
				if len(delim) == 1 && n == 1 {
					return j
				}
				if len(delim) == 2 && n >= 2 {
					return j + n - 2
				}
			}
			j += n
			continue
		}
		j++
	}
	return -1
}

// closesWord reports whether a closing "_" at the end of a run is not inside
// a word; other markers may close anywhere.
func closesWord(s string, after int, c byte) bool {
	if c != '_' || after >= len(s) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[after:])
	return !isWordRune(r)
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r)
}

func runLength(s string, i int, c byte) int {
	n := 0
	for i+n < len(s) && s[i+n] == c {
		n++
	}
	return n
}

// escapeText escapes &, < and > for text outside tags.
func escapeText(s string) string {
	var b strings.Builder
	writeEscaped(&b, s)
	return b.String()
}

// escapeAttr escapes an attribute value for a double-quoted attribute.
func escapeAttr(s string) string {
	return strings.ReplaceAll(escapeText(s), `"`, "&quot;")
}

func writeEscaped(b *strings.Builder, s string) {
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		default:
			b.WriteByte(s[i])
		}
	}
}

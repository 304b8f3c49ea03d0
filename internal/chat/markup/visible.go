package markup

import (
	"html"
	"strings"
)

// Visible returns the text a user sees of Telegram HTML: tags dropped,
// entities decoded. It is also the plain text to send when Telegram rejects
// the markup.
func Visible(s string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(s, '<')
		if i < 0 {
			b.WriteString(s)
			break
		}
		b.WriteString(s[:i])
		j := strings.IndexByte(s[i:], '>')
		if j < 0 {
			b.WriteString(s[i:])
			break
		}
		s = s[i+j+1:]
	}
	return html.UnescapeString(b.String())
}

// EscapeText escapes &, < and > so that s shows as it is in Telegram HTML.
func EscapeText(s string) string {
	return escapeText(s)
}

// UTF16Units returns the length of r in UTF-16 code units: 2 beyond the
// Basic Multilingual Plane, else 1.
func UTF16Units(r rune) int {
	return utf16Units(r)
}

// CutVisible returns the start of the Telegram HTML s whose visible text
// is the first n bytes of Visible(s), with the tags still open there
// closed, so the result is valid HTML that shows no more than that. A cut
// never falls inside a tag, an entity or a character: it ends before the
// one that would cross n.
func CutVisible(s string, n int) string {
	atoms := tokenize(s, true)
	var stack []tagRef
	shown, end := 0, 0
	for ; end < len(atoms); end++ {
		a := atoms[end]
		if a.kind == textAtom {
			w := len(a.raw)
			if a.raw[0] == '&' && len(a.raw) > 1 {
				w = len(html.UnescapeString(a.raw))
			}
			if shown+w > n {
				break
			}
			shown += w
		}
		stack = applyAtom(stack, a)
	}
	return assemble(atoms[:end], nil, stack)
}

package markup

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// RenderHTML converts the Markdown subset a model writes into Telegram's HTML
// parse mode, using only tags Telegram supports.
//
// Blocks: ``` or ~~~ fenced code (with an optional language, rendered
// <pre><code class="language-x">; an unclosed fence runs to the end, as in
// CommonMark, and an info string that is not one word stays as the code's
// first line), # headings (bold lines), "-", "*" and "+" bullets ("• item"),
// numbered items (kept as "1. item"), pipe tables (a <pre> block with the
// columns padded, so they stay aligned), and > blockquotes (<blockquote>; a
// nested quote marker stays literal, since Telegram cannot nest quotes).
// Inline: **bold** and __bold__ (<b>), *italic* and _italic_ (<i>, never
// inside a word for "_"), ~~strike~~ (<s>), `code` (<code>), [text](url)
// links for http, https, tg and mailto URLs (any other URL is kept as
// "text (url)"), <https://...> autolinks, and backslash escapes.
//
// Every character outside a tag is escaped (&, <, >), and quotes too in
// attributes. A marker without its partner stays literal, and no text is lost:
// all that is dropped is the Markdown syntax itself.
func RenderHTML(markdown string) string {
	markdown = strings.ReplaceAll(markdown, "\r\n", "\n")
	return renderBlocks(strings.Split(markdown, "\n"), true)
}

// renderBlocks renders lines as blocks joined by newlines; quotes says
// whether a ">" line starts a blockquote.
func renderBlocks(lines []string, quotes bool) string {
	var out, para []string
	flush := func() {
		if len(para) > 0 {
			out = append(out, renderInline(strings.Join(para, "\n"), false))
			para = nil
		}
	}
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		trimmed := strings.TrimLeft(line, " \t")
		if marker, info, ok := fenceOpen(trimmed); ok {
			flush()
			end := i + 1
			for end < len(lines) && !fenceCloses(lines[end], marker) {
				end++
			}
			out = append(out, codeBlock(info, dedent(lines[i+1:end], len(line)-len(trimmed))))
			i = end
			continue
		}
		if end, ok := tableAt(lines, i); ok {
			flush()
			out = append(out, renderTable(lines[i:end]))
			i = end - 1
			continue
		}
		if text, ok := heading(line); ok {
			flush()
			out = append(out, "<b>"+renderInline(text, false)+"</b>")
			continue
		}
		if quotes && quoteLine(line) {
			flush()
			var inner []string
			for ; i < len(lines) && quoteLine(lines[i]); i++ {
				inner = append(inner, stripQuote(lines[i]))
			}
			i--
			out = append(out, "<blockquote>"+renderBlocks(inner, false)+"</blockquote>")
			continue
		}
		if indent, marker, rest, ok := listItem(line); ok {
			flush()
			out = append(out, indent+marker+" "+renderInline(rest, false))
			continue
		}
		if strings.TrimSpace(line) == "" {
			flush()
			out = append(out, "")
			continue
		}
		para = append(para, line)
	}
	flush()
	return strings.Join(out, "\n")
}

// fenceOpen reports whether line (without its indentation) opens a fenced
// code block, and returns the fence marker and the info string.
func fenceOpen(line string) (marker, info string, ok bool) {
	if !strings.HasPrefix(line, "```") && !strings.HasPrefix(line, "~~~") {
		return "", "", false
	}
	n := runLength(line, 0, line[0])
	info = strings.TrimSpace(line[n:])
	if line[0] == '`' && strings.Contains(info, "`") {
		return "", "", false
	}
	return line[:n], info, true
}

// languageName reports whether info is one word that names a language.
func languageName(info string) bool {
	for _, r := range info {
		if !isWordRune(r) && !strings.ContainsRune("_+#.-", r) {
			return false
		}
	}
	return info != ""
}

// dedent joins code lines, removing from each up to indent leading spaces
// (the fence's own indentation), as CommonMark does.
func dedent(lines []string, indent int) string {
	out := make([]string, len(lines))
	for i, l := range lines {
		n := 0
		for n < indent && n < len(l) && (l[n] == ' ' || l[n] == '\t') {
			n++
		}
		out[i] = l[n:]
	}
	return strings.Join(out, "\n")
}

// fenceCloses reports whether line closes a block opened with marker.
func fenceCloses(line, marker string) bool {
	t := strings.TrimSpace(line)
	return strings.HasPrefix(t, marker) && strings.Trim(t, marker[:1]) == ""
}

// codeBlock renders a fenced block. An info string that is one word names
// the language; any other is kept as the block's first line, so that no
// text is lost.
func codeBlock(info, body string) string {
	var b strings.Builder
	if languageName(info) {
		b.WriteString(`<pre><code class="language-` + escapeAttr(info) + `">`)
		writeEscaped(&b, body)
		b.WriteString("</code></pre>")
		return b.String()
	}
	if info != "" {
		body = info + "\n" + body
	}
	b.WriteString("<pre>")
	writeEscaped(&b, body)
	b.WriteString("</pre>")
	return b.String()
}

// heading returns the text of an ATX heading line ("## Title").
func heading(line string) (string, bool) {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return "", false
	}
	n := runLength(t, 0, '#')
	if n == 0 || n > 6 || (n < len(t) && t[n] != ' ' && t[n] != '\t') {
		return "", false
	}
	return strings.TrimSpace(t[n:]), true
}

func quoteLine(line string) bool {
	t := strings.TrimLeft(line, " ")
	return len(line)-len(t) <= 3 && strings.HasPrefix(t, ">")
}

func stripQuote(line string) string {
	t := strings.TrimPrefix(strings.TrimLeft(line, " "), ">")
	return strings.TrimPrefix(t, " ")
}

// listItem splits a bullet or numbered list line into its indentation, the
// marker to show ("•" or the original number with its delimiter) and the
// item's text.
func listItem(line string) (indent, marker, rest string, ok bool) {
	t := strings.TrimLeft(line, " \t")
	indent = line[:len(line)-len(t)]
	if len(t) >= 2 && strings.ContainsRune("-*+", rune(t[0])) && (t[1] == ' ' || t[1] == '\t') {
		return indent, "•", strings.TrimLeft(t[2:], " \t"), true
	}
	digits := 0
	for digits < len(t) && digits < 9 && t[digits] >= '0' && t[digits] <= '9' {
		digits++
	}
	if digits == 0 || digits+1 >= len(t) || (t[digits] != '.' && t[digits] != ')') || (t[digits+1] != ' ' && t[digits+1] != '\t') {
		return "", "", "", false
	}
	return indent, t[:digits+1], strings.TrimLeft(t[digits+2:], " \t"), true
}

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

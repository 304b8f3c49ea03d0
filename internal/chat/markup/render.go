package markup

import (
	"strings"
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

package markup

import (
	"strings"
	"unicode/utf8"
)

// tableAt reports whether a Markdown table starts at lines[i] (a row of
// cells between pipes, then a delimiter row such as |---|:--:|) and returns
// the index after its last row.
func tableAt(lines []string, i int) (end int, ok bool) {
	if i+1 >= len(lines) || !tableRow(lines[i]) || !delimiterRow(lines[i+1]) {
		return 0, false
	}
	end = i + 2
	for end < len(lines) && tableRow(lines[end]) {
		end++
	}
	return end, true
}

// tableRow reports whether line is a row of a pipe table.
func tableRow(line string) bool {
	t := strings.TrimSpace(line)
	return len(t) >= 2 && t[0] == '|' && strings.Count(t, "|") >= 2
}

// delimiterRow reports whether line is a table's delimiter row.
func delimiterRow(line string) bool {
	cells := tableCells(line)
	if len(cells) == 0 {
		return false
	}
	for _, c := range cells {
		c = strings.TrimSuffix(strings.TrimPrefix(c, ":"), ":")
		if c == "" || strings.Trim(c, "-") != "" {
			return false
		}
	}
	return true
}

// tableCells splits a row into its trimmed cells; "\|" is a pipe inside a
// cell.
func tableCells(line string) []string {
	t := strings.TrimSpace(line)
	t = strings.TrimPrefix(t, "|")
	if strings.HasSuffix(t, "|") && !strings.HasSuffix(t, `\|`) {
		t = t[:len(t)-1]
	}
	var cells []string
	var cur strings.Builder
	for i := 0; i < len(t); i++ {
		switch {
		case t[i] == '\\' && i+1 < len(t) && t[i+1] == '|':
			cur.WriteByte('|')
			i++
		case t[i] == '|':
			cells = append(cells, strings.TrimSpace(cur.String()))
			cur.Reset()
		default:
			cur.WriteByte(t[i])
		}
	}
	return append(cells, strings.TrimSpace(cur.String()))
}

// alignment is how a table column's cells stand in its width, as the
// delimiter row says: |---| or |:--| left, |--:| right, |:-:| centred.
type alignment int

const (
	alignLeft alignment = iota
	alignRight
	alignCenter
)

// alignments reads the columns' alignments off a delimiter row.
func alignments(delimiter string) []alignment {
	var out []alignment
	for _, c := range tableCells(delimiter) {
		left, right := strings.HasPrefix(c, ":"), strings.HasSuffix(c, ":")
		switch {
		case left && right:
			out = append(out, alignCenter)
		case right:
			out = append(out, alignRight)
		default:
			out = append(out, alignLeft)
		}
	}
	return out
}

// pad returns c padded with spaces to width runes as a says.
func pad(c string, width int, a alignment) string {
	gap := width - utf8.RuneCountInString(c)
	switch a {
	case alignRight:
		return strings.Repeat(" ", gap) + c
	case alignCenter:
		return strings.Repeat(" ", gap/2) + c + strings.Repeat(" ", gap-gap/2)
	}
	return c + strings.Repeat(" ", gap)
}

// renderTable renders a pipe table as a <pre> block with its columns
// padded to one width, so that it stays aligned in Telegram's monospace
// font, each cell standing as its column's delimiter says; the delimiter
// row becomes a line of dashes.
func renderTable(lines []string) string {
	var rows [][]string
	var widths []int
	aligns := alignments(lines[1])
	for i, l := range lines {
		if i == 1 {
			rows = append(rows, nil) // the delimiter row
			continue
		}
		cells := tableCells(l)
		for j, c := range cells {
			c = plainCell(c)
			cells[j] = c
			if j >= len(widths) {
				widths = append(widths, 0)
			}
			widths[j] = max(widths[j], utf8.RuneCountInString(c))
		}
		rows = append(rows, cells)
	}
	var b strings.Builder
	for i, cells := range rows {
		if i > 0 {
			b.WriteByte('\n')
		}
		if cells == nil {
			for j, w := range widths {
				if j > 0 {
					b.WriteString("-+-")
				}
				b.WriteString(strings.Repeat("-", w))
			}
			continue
		}
		var line strings.Builder
		for j, c := range cells {
			if j > 0 {
				line.WriteString(" | ")
			}
			a := alignLeft
			if j < len(aligns) {
				a = aligns[j]
			}
			line.WriteString(pad(c, widths[j], a))
		}
		b.WriteString(strings.TrimRight(line.String(), " "))
	}
	return "<pre>" + escapeText(b.String()) + "</pre>"
}

// plainCell drops the Markdown a cell's text is most often wrapped in
// (**bold**, `code`), which a <pre> block would show as it is.
func plainCell(c string) string {
	for _, m := range []string{"**", "__", "`"} {
		if len(c) > 2*len(m) && strings.HasPrefix(c, m) && strings.HasSuffix(c, m) {
			return c[len(m) : len(c)-len(m)]
		}
	}
	return c
}

package markup

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxMessageLength is Telegram's limit on a message's text, in UTF-16 code
// units.
const MaxMessageLength = 4096

// UTF16Len returns the length of s in UTF-16 code units, the unit in which
// Telegram counts a message's length.
func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16Units(r)
	}
	return n
}

func utf16Units(r rune) int {
	if r >= 0x10000 {
		return 2
	}
	return 1
}

// SplitMessage splits Telegram HTML into parts that each fit in limit
// UTF-16 code units (MaxMessageLength when limit is not positive) and are
// valid HTML on their own. The count is conservative: it covers the whole
// HTML source, tags and entities included, although Telegram counts only the
// visible text.
//
// A part ends at the last paragraph break that fits, else the last line
// break, else the last space (a boundary in the first quarter of the part is
// passed over for a lesser one), else between two characters; never inside
// a tag, an entity or a character. The separator stays at the end of the
// earlier part. Tags open at a split are closed at the end of the part and
// opened again, with their attributes, at the start of the next, so the
// parts' visible texts put together are the whole visible text. A trailing
// part that would hold only white space is dropped, as Telegram rejects an
// empty message. A part can exceed limit only when the tags it must reopen
// and close leave no room for a single character.
func SplitMessage(html string, limit int) []string {
	return split(html, limit, true)
}

// SplitPlain splits plain text (sent without a parse mode) like
// SplitMessage, treating "<" and "&" as ordinary characters. Put together,
// the parts give back text, less any white space a dropped trailing part
// held.
func SplitPlain(text string, limit int) []string {
	return split(text, limit, false)
}

type atomKind int

const (
	textAtom atomKind = iota
	openTag
	closeTag
)

// atom is an indivisible piece of the text: a character, an entity or a tag.
type atom struct {
	raw   string
	kind  atomKind
	name  string // the tag's name
	units int    // UTF-16 length of raw
	space bool   // a white-space character
}

// tagRef is an open tag: its name and its raw text for reopening it.
type tagRef struct {
	name, raw string
}

// boundary levels, from worst to best.
const (
	anyBoundary = iota
	wordBoundary
	lineBoundary
	paragraphBoundary
)

// cut is a place where a part may end.
type cut struct {
	ok   bool
	end  int      // index of the first atom of the next part
	cost int      // UTF-16 length of the part ending here, closers included
	open []tagRef // tags open here
}

func split(text string, limit int, html bool) []string {
	if limit <= 0 {
		limit = MaxMessageLength
	}
	atoms := tokenize(text, html)
	var parts []string
	var open []tagRef
	for pos := 0; pos < len(atoms); {
		c := nextCut(atoms, pos, open, limit)
		part := assemble(atoms[pos:c.end], open, c.open)
		if c.end < len(atoms) || !blank(atoms[pos:c.end]) {
			parts = append(parts, part)
		}
		pos, open = c.end, c.open
	}
	return parts
}

// nextCut finds where the part starting at atom pos, with open tags
// reopened, ends.
func nextCut(atoms []atom, pos int, open []tagRef, limit int) cut {
	stack := append([]tagRef(nil), open...)
	used := 0
	for _, t := range open {
		used += UTF16Len(t.raw)
	}
	var best [paragraphBoundary + 1]cut
	content := false
	j := pos
	for ; j < len(atoms); j++ {
		a := atoms[j]
		next := applyAtom(stack, a)
		if used+a.units+closersLen(next) > limit {
			break
		}
		stack, used = next, used+a.units
		if a.kind == textAtom && !a.space {
			content = true
		}
		if !content {
			continue
		}
		c := cut{ok: true, end: j + 1, cost: used + closersLen(stack), open: stack}
		best[anyBoundary] = c
		if level := boundaryLevel(atoms, j); level > anyBoundary {
			best[level] = c
		}
	}
	if j == len(atoms) {
		return cut{ok: true, end: j, open: stack}
	}
	for level := paragraphBoundary; level > anyBoundary; level-- {
		if best[level].ok && best[level].cost >= limit/4 {
			return best[level]
		}
	}
	if best[anyBoundary].ok {
		return best[anyBoundary]
	}
	// Nothing fits beside the reopened tags: take atoms up to the first
	// visible character anyway, so that splitting always moves on.
	for j = pos; j < len(atoms); j++ {
		stack = applyAtom(stack, atoms[j])
		if atoms[j].kind == textAtom && !atoms[j].space {
			break
		}
	}
	return cut{ok: true, end: min(j+1, len(atoms)), open: stack}
}

// boundaryLevel returns how good a place to end a part the end of atom j is.
func boundaryLevel(atoms []atom, j int) int {
	a := atoms[j]
	if a.kind != textAtom {
		return anyBoundary
	}
	switch a.raw {
	case "\n":
		if j > 0 && atoms[j-1].raw == "\n" {
			return paragraphBoundary
		}
		return lineBoundary
	case " ", "\t":
		return wordBoundary
	}
	return anyBoundary
}

// applyAtom returns the stack of open tags after a; it never changes stack.
func applyAtom(stack []tagRef, a atom) []tagRef {
	switch a.kind {
	case openTag:
		return append(stack[:len(stack):len(stack)], tagRef{name: a.name, raw: a.raw})
	case closeTag:
		for k := len(stack) - 1; k >= 0; k-- {
			if stack[k].name == a.name {
				return append(stack[:k:k], stack[k+1:]...)
			}
		}
	}
	return stack
}

func closersLen(stack []tagRef) int {
	n := 0
	for _, t := range stack {
		n += len(t.name) + 3
	}
	return n
}

// assemble builds a part: the reopened tags, the atoms, and closers for the
// tags still open at its end.
func assemble(atoms []atom, reopen, open []tagRef) string {
	var b strings.Builder
	for _, t := range reopen {
		b.WriteString(t.raw)
	}
	for _, a := range atoms {
		b.WriteString(a.raw)
	}
	for k := len(open) - 1; k >= 0; k-- {
		b.WriteString("</" + open[k].name + ">")
	}
	return b.String()
}

func blank(atoms []atom) bool {
	for _, a := range atoms {
		if a.kind == textAtom && !a.space {
			return false
		}
	}
	return true
}

// tokenize cuts text into atoms; in HTML mode tags and entities are atoms of
// their own.
func tokenize(text string, html bool) []atom {
	atoms := make([]atom, 0, len(text))
	for i := 0; i < len(text); {
		if html {
			if a, n, ok := markupAtom(text[i:]); ok {
				atoms = append(atoms, a)
				i += n
				continue
			}
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		atoms = append(atoms, atom{raw: text[i : i+n], units: utf16Units(r), space: unicode.IsSpace(r)})
		i += n
	}
	return atoms
}

// markupAtom returns the tag or entity at the start of s.
func markupAtom(s string) (atom, int, bool) {
	switch s[0] {
	case '<':
		end := tagClose(s)
		if end < 0 {
			return atom{}, 0, false
		}
		raw := s[:end+1]
		body := strings.TrimSpace(raw[1:end])
		kind := openTag
		if name, ok := strings.CutPrefix(body, "/"); ok {
			kind, body = closeTag, name
		}
		name, _, _ := strings.Cut(strings.TrimSpace(body), " ")
		return atom{raw: raw, kind: kind, name: strings.ToLower(name), units: UTF16Len(raw)}, len(raw), true
	case '&':
		end := strings.IndexByte(s, ';')
		if end < 2 || end > 12 || strings.ContainsAny(s[1:end], " \t\n&<>") {
			return atom{}, 0, false
		}
		return atom{raw: s[:end+1], units: end + 1}, end + 1, true
	}
	return atom{}, 0, false
}

// tagClose returns the index of the ">" that ends the tag opening s, or -1
// when another "<" comes first. Attribute values must escape ">", as
// RenderHTML's do.
func tagClose(s string) int {
	end := strings.IndexByte(s, '>')
	if end < 0 || strings.IndexByte(s[1:end], '<') >= 0 {
		return -1
	}
	return end
}

package telegramtest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ParseHTML parses text the way Telegram's HTML parse mode does and returns
// the text a user sees: tags removed and entities decoded. It fails on what
// Telegram rejects with "can't parse entities": a tag Telegram does not
// support, a bare "<", a "&" that starts no supported entity (&lt;, &gt;,
// &amp;, &quot; and numeric ones), unbalanced or crossed tags, a nested
// blockquote, and text that is not UTF-8. A bare ">" is accepted, as Telegram
// accepts it. Unknown attributes are ignored.
func ParseHTML(text string) (string, error) {
	if !utf8.ValidString(text) {
		return "", fmt.Errorf("text must be encoded in UTF-8")
	}
	var out strings.Builder
	var open []string
	for i := 0; i < len(text); {
		switch text[i] {
		case '<':
			end := tagEnd(text, i)
			if end < 0 {
				return "", fmt.Errorf("unclosed start tag at byte offset %d", i)
			}
			var err error
			open, err = applyTag(open, text[i+1:end], i)
			if err != nil {
				return "", err
			}
			i = end + 1
		case '&':
			r, n, ok := decodeEntity(text[i:])
			if !ok {
				return "", fmt.Errorf("unsupported HTML entity or bare \"&\" at byte offset %d", i)
			}
			out.WriteRune(r)
			i += n
		default:
			out.WriteByte(text[i])
			i++
		}
	}
	if len(open) > 0 {
		return "", fmt.Errorf("can't find end tag corresponding to start tag %q", open[len(open)-1])
	}
	return out.String(), nil
}

// tagEnd returns the index of the ">" that ends the tag starting at start,
// skipping quoted attribute values, or -1.
func tagEnd(text string, start int) int {
	var quote byte
	for j := start + 1; j < len(text); j++ {
		c := text[j]
		switch {
		case quote != 0:
			if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '>':
			return j
		case c == '<':
			return -1
		}
	}
	return -1
}

// applyTag applies the tag body (between "<" and ">") at byte offset to the
// stack of open tags.
func applyTag(open []string, body string, offset int) ([]string, error) {
	if closing, ok := strings.CutPrefix(body, "/"); ok {
		name := strings.ToLower(strings.TrimSpace(closing))
		if len(open) == 0 {
			return nil, fmt.Errorf("unexpected end tag at byte offset %d", offset)
		}
		if top := open[len(open)-1]; top != name {
			return nil, fmt.Errorf("unmatched end tag at byte offset %d, expected \"</%s>\", found \"</%s>\"", offset, top, name)
		}
		return open[:len(open)-1], nil
	}
	name, attrs := splitTag(body)
	if !supportedTag(name, attrs) {
		return nil, fmt.Errorf("unsupported start tag %q at byte offset %d", name, offset)
	}
	if name == "blockquote" && slices.Contains(open, "blockquote") {
		return nil, fmt.Errorf("blockquote can't be nested, at byte offset %d", offset)
	}
	return append(open, name), nil
}

// splitTag returns a start tag's lower-case name and its attributes, with
// entities in values decoded.
func splitTag(body string) (string, map[string]string) {
	name, rest, _ := strings.Cut(strings.TrimSpace(body), " ")
	attrs := map[string]string{}
	rest = strings.TrimSpace(rest)
	for rest != "" {
		key, after, hasValue := strings.Cut(rest, "=")
		if sp := strings.IndexAny(key, " \t\n"); sp >= 0 || !hasValue {
			if sp < 0 {
				sp = len(key)
			}
			attrs[strings.ToLower(key[:sp])] = ""
			rest = strings.TrimSpace(rest[sp:])
			continue
		}
		var value string
		if after != "" && (after[0] == '"' || after[0] == '\'') {
			end := strings.IndexByte(after[1:], after[0])
			if end < 0 {
				end = len(after) - 1
			}
			value, rest = after[1:1+end], after[min(len(after), end+2):]
		} else {
			value, rest, _ = strings.Cut(after, " ")
		}
		attrs[strings.ToLower(strings.TrimSpace(key))] = decodeAttribute(value)
		rest = strings.TrimSpace(rest)
	}
	return strings.ToLower(name), attrs
}

// supportedTag reports whether Telegram's HTML parse mode supports the tag.
func supportedTag(name string, attrs map[string]string) bool {
	switch name {
	case "b", "strong", "i", "em", "u", "ins", "s", "strike", "del", "tg-spoiler",
		"code", "pre", "blockquote", "a":
		return true
	case "span":
		return attrs["class"] == "tg-spoiler"
	case "tg-emoji":
		return attrs["emoji-id"] != ""
	}
	return false
}

// decodeEntity decodes the entity at the start of s and returns the rune and
// the entity's length in bytes.
func decodeEntity(s string) (rune, int, bool) {
	end := strings.IndexByte(s, ';')
	if end < 2 || end > 12 {
		return 0, 0, false
	}
	name := s[1:end]
	switch name {
	case "lt":
		return '<', end + 1, true
	case "gt":
		return '>', end + 1, true
	case "amp":
		return '&', end + 1, true
	case "quot":
		return '"', end + 1, true
	}
	num, ok := strings.CutPrefix(name, "#")
	if !ok || num == "" {
		return 0, 0, false
	}
	base := 10
	if hex, isHex := strings.CutPrefix(strings.ToLower(num), "x"); isHex {
		num, base = hex, 16
	}
	n, err := strconv.ParseUint(num, base, 32)
	if err != nil || n == 0 || !utf8.ValidRune(rune(n)) {
		return 0, 0, false
	}
	return rune(n), end + 1, true
}

// decodeAttribute decodes the entities of an attribute value, leaving a "&"
// that starts none as it is.
func decodeAttribute(v string) string {
	if !strings.Contains(v, "&") {
		return v
	}
	var b strings.Builder
	for i := 0; i < len(v); {
		if v[i] == '&' {
			if r, n, ok := decodeEntity(v[i:]); ok {
				b.WriteRune(r)
				i += n
				continue
			}
		}
		b.WriteByte(v[i])
		i++
	}
	return b.String()
}

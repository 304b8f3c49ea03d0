package redactor

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"unicode/utf8"
)

// patterns returns every string the redactor looks for, sorted and without
// duplicates: each secret of at least MinimumSecretLength bytes, its
// line-ending variants and long-enough lines, and the derived (encoded) forms
// of each of those that are themselves at least MinimumSecretLength long.
func patterns(secrets []string) []string {
	set := make(map[string]struct{})
	add := func(p string) {
		if len(p) >= MinimumSecretLength {
			set[p] = struct{}{}
		}
	}
	for _, secret := range secrets {
		if len(secret) < MinimumSecretLength {
			continue
		}
		for _, value := range baseValues(secret) {
			add(value)
			for _, form := range derivedForms(value) {
				add(form)
			}
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// baseValues returns the secret itself and, when it spans lines, its
// variants with \n and \r\n line breaks and each of its lines that is at
// least MinimumSecretLength long.
func baseValues(secret string) []string {
	values := []string{secret}
	if !strings.ContainsAny(secret, "\r\n") {
		return values
	}
	lf := strings.ReplaceAll(secret, "\r\n", "\n")
	crlf := strings.ReplaceAll(lf, "\n", "\r\n")
	values = append(values, lf, crlf)
	for line := range strings.SplitSeq(lf, "\n") {
		if len(line) >= MinimumSecretLength {
			values = append(values, line)
		}
	}
	return values
}

// derivedForms returns the encoded forms of value: base64 (standard and
// URL-safe alphabets, each byte alignment), percent-encoding, JSON string
// escaping and hex. Short results are filtered by the caller.
func derivedForms(value string) []string {
	forms := make([]string, 0, 24)
	forms = append(forms, base64Forms(value)...)
	forms = append(forms, percentForms(value)...)
	forms = append(forms, jsonForms(value)...)
	h := hex.EncodeToString([]byte(value))
	forms = append(forms, h, strings.ToUpper(h))
	return forms
}

// base64Forms returns, for each alphabet and for each of the three offsets
// (modulo 3) at which value can start inside a longer encoded byte stream,
// the run of base64 characters that depends on value alone. Characters that
// mix in bits of the unknown bytes before or after value are left out, so
// base64(prefix + value + suffix) contains one of these runs for any prefix
// and suffix.
func base64Forms(value string) []string {
	forms := make([]string, 0, 6)
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for k := range 3 {
			buf := make([]byte, k+len(value))
			copy(buf[k:], value)
			encoded := enc.EncodeToString(buf)
			start := (8*k + 5) / 6          // first character without prefix bits
			end := 8 * (k + len(value)) / 6 // characters complete before the suffix
			if end > start {
				forms = append(forms, encoded[start:end])
			}
		}
	}
	return forms
}

// percentForms returns value as url.QueryEscape and url.PathEscape write it,
// as JavaScript's encodeURIComponent writes it, and with every byte outside
// the RFC 3986 unreserved set escaped, each with upper- and lower-case hex
// digits.
func percentForms(value string) []string {
	upper := []string{
		url.QueryEscape(value),
		url.PathEscape(value),
		percentEncode(value, "-_.!~*'()"),
		percentEncode(value, "-_.~"),
	}
	forms := make([]string, 0, 2*len(upper))
	for _, f := range upper {
		forms = append(forms, f, lowerPercentHex(f))
	}
	return forms
}

// percentEncode escapes every byte of s except ASCII letters, digits and
// the bytes in keep, with upper-case hex digits.
func percentEncode(s, keep string) string {
	const digits = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(3 * len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(keep, c) >= 0 {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(digits[c>>4])
		b.WriteByte(digits[c&15])
	}
	return b.String()
}

// lowerPercentHex lower-cases the two hex digits after every '%' in s.
func lowerPercentHex(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1] = lowerASCII(b[i+1])
			b[i+2] = lowerASCII(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// jsonForms returns the body (without quotes) of value as a JSON string the
// way encoding/json writes it (with and without HTML escaping), the way
// JavaScript's JSON.stringify writes it, and with every non-ASCII character
// as a \u escape (Python's json.dumps default).
func jsonForms(value string) []string {
	forms := make([]string, 0, 4)
	if b, err := json.Marshal(value); err == nil {
		forms = append(forms, string(b[1:len(b)-1]))
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(value); err == nil {
		b := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		forms = append(forms, string(b[1:len(b)-1]))
	}
	forms = append(forms, jsonEscape(value, false), jsonEscape(value, true))
	return forms
}

// jsonEscape escapes s as JSON.stringify does: quote, backslash and the
// control characters, the common ones in their short form. With asciiOnly,
// every non-ASCII rune is written as \uXXXX (surrogate pairs above the BMP).
func jsonEscape(s string, asciiOnly bool) string {
	const digits = "0123456789abcdef"
	var b strings.Builder
	b.Grow(len(s) + 8)
	u := func(r rune) {
		b.WriteString(`\u`)
		b.WriteByte(digits[r>>12&15])
		b.WriteByte(digits[r>>8&15])
		b.WriteByte(digits[r>>4&15])
		b.WriteByte(digits[r&15])
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c >= utf8.RuneSelf && asciiOnly {
			r, size := utf8.DecodeRuneInString(s[i:])
			i += size
			if r > 0xFFFF {
				r -= 0x10000
				u(0xD800 + r>>10)
				u(0xDC00 + r&0x3FF)
			} else {
				u(r)
			}
			continue
		}
		i++
		switch c {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if c < 0x20 {
				u(rune(c))
			} else {
				b.WriteByte(c)
			}
		}
	}
	return b.String()
}

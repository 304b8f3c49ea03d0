package redactor

import (
	"bytes"
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// patternSet is what the redactor looks for, per channel: raw patterns are
// matched byte for byte; encoded patterns (base64, base32, hex) are matched
// with separators and hex-dump layouts skipped (see layout.go).
type patternSet struct {
	raw, encoded []string
	frags        []string // the raw patterns that are fragments, also in raw
}

// patterns returns every string the redactor looks for, each list sorted
// and without duplicates: for each secret of at least MinimumSecretLength
// bytes, its line-ending variants and long-enough lines, their raw derived
// forms (percent, JSON, UTF-16) and encoded forms (base64, base32, hex),
// the secret's fragments, fragLen(len(secret)) bytes long, raw and in hex,
// and the base64 and base32 forms of its pieces (see encodedPiece)
// (none when fragLen is nil); every pattern at least MinimumSecretLength
// long.
func patterns(secrets []string, fragLen func(int) int) patternSet {
	raw := make(map[string]struct{})
	enc := make(map[string]struct{})
	frags := make(map[string]struct{})
	add := func(set map[string]struct{}, p string) {
		if len(p) >= MinimumSecretLength {
			set[p] = struct{}{}
		}
	}
	for _, secret := range secrets {
		if len(secret) < MinimumSecretLength {
			continue
		}
		for _, value := range baseValues(secret) {
			add(raw, value)
			for _, form := range rawForms(value) {
				add(raw, form)
			}
			for _, form := range encodedForms(value) {
				for _, w := range windows(form, maxEncodedLen) {
					add(enc, w)
				}
			}
		}
		if fragLen == nil {
			continue
		}
		for _, frag := range fragments(secret, fragLen(len(secret))) {
			add(raw, frag)
			add(frags, frag)
			h := hex.EncodeToString([]byte(frag))
			add(enc, h)
			add(enc, strings.ToUpper(h))
		}
		// A cut of a secret's base64 or base32 form shows, once it holds
		// about a fragment's worth, the form of one of these pieces at
		// the alignment it was written at (see New).
		size, step := encodedPiece(fragLen(len(secret)))
		for _, piece := range pieces(secret, size, step) {
			for _, form := range radixForms(piece) {
				add(enc, form)
			}
		}
	}
	return patternSet{raw: sortedKeys(raw), encoded: sortedKeys(enc), frags: sortedKeys(frags)}
}

func sortedKeys(set map[string]struct{}) []string {
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// baseValues returns the secret itself and, when it spans lines, its
// variants with \n and \r\n line breaks and each of its lines that is at
// least MinimumSecretLength long, except a PEM block's armour lines (the
// same in every key of a kind).
func baseValues(secret string) []string {
	values := []string{secret}
	if !strings.ContainsAny(secret, "\r\n") {
		return values
	}
	lf := strings.ReplaceAll(secret, "\r\n", "\n")
	crlf := strings.ReplaceAll(lf, "\n", "\r\n")
	values = append(values, lf, crlf)
	for line := range strings.SplitSeq(lf, "\n") {
		if len(line) >= MinimumSecretLength && !isArmour(line) {
			values = append(values, line)
		}
	}
	return values
}

// rawForms returns the forms of value matched byte for byte:
// percent-encoding, JSON string escaping, and UTF-16 (little and big
// endian). Short results are filtered by the caller.
func rawForms(value string) []string {
	forms := make([]string, 0, 16)
	forms = append(forms, percentForms(value)...)
	forms = append(forms, jsonForms(value)...)
	return append(forms, utf16Forms(value)...)
}

// utf16Forms returns value in UTF-16LE and UTF-16BE, as iconv -t utf-16le
// and -t utf-16be write it (no byte order mark: a mark before the text does
// not change the bytes of the secret).
func utf16Forms(value string) []string {
	units := utf16.Encode([]rune(value))
	le := make([]byte, 2*len(units))
	be := make([]byte, 2*len(units))
	for i, u := range units {
		le[2*i], le[2*i+1] = byte(u), byte(u>>8)
		be[2*i], be[2*i+1] = byte(u>>8), byte(u)
	}
	return []string{string(le), string(be)}
}

// encodedForms returns the forms of value matched with separators skipped:
// base64 (standard and URL-safe alphabets, each byte alignment), base32
// (RFC 4648, each alignment) and hex (lower and upper case).
func encodedForms(value string) []string {
	forms := radixForms(value)
	h := hex.EncodeToString([]byte(value))
	return append(forms, h, strings.ToUpper(h))
}

// radixForms returns the base64 (standard and URL-safe alphabets) and
// base32 (RFC 4648) forms of value at each alignment (see alignedForms).
func radixForms(value string) []string {
	forms := make([]string, 0, 13)
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		forms = append(forms, alignedForms(value, 6, 3, enc.EncodeToString)...)
	}
	return append(forms, alignedForms(value, 5, 5, base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString)...)
}

// alignedForms returns, for each of the offsets (modulo period bytes) at
// which value can start inside a longer encoded byte stream, the run of
// characters (of bits bits each) that depends on value alone. Characters
// that mix in bits of the unknown bytes before or after value are left out,
// so encode(prefix + value + suffix) contains one of these runs for any
// prefix and suffix.
func alignedForms(value string, bits, period int, encode func([]byte) string) []string {
	forms := make([]string, 0, period)
	for k := range period {
		buf := make([]byte, k+len(value))
		copy(buf[k:], value)
		encoded := encode(buf)
		start := (8*k + bits - 1) / bits   // first character without prefix bits
		end := 8 * (k + len(value)) / bits // characters complete before the suffix
		if end > start {
			forms = append(forms, encoded[start:end])
		}
	}
	return forms
}

// windows returns form itself when it is at most n bytes long, and
// otherwise overlapping pieces of n bytes (each starting n/2 after the
// previous one, the last ending at form's end) whose union is form: every
// occurrence of form is still redacted whole, and no pattern is longer than
// n.
func windows(form string, n int) []string {
	if len(form) <= n {
		return []string{form}
	}
	var out []string
	for i := 0; ; i += n / 2 {
		if i+n >= len(form) {
			return append(out, form[len(form)-n:])
		}
		out = append(out, form[i:i+n])
	}
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

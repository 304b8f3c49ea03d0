package redactor

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"strings"
)

// form writes a value (a secret with bytes around it) into text the way a
// program would; rng picks its free choices (widths, separators, cuts).
type form func(rng *rand.Rand, s string) string

// fuzzForms are the ways the fuzz targets write a secret into the text:
// the independent encoders of TestRedactDerivedForms, the line-ending
// variants, base64, base32 and hex wrapped at a random width with random
// separators, emulated xxd, hexdump -C and od dumps, UTF-16, and cuts (a
// random piece of the value, raw or in hex).
func fuzzForms() []form {
	forms := make([]form, 0, len(encodings)+16)
	for _, e := range encodings {
		forms = append(forms, func(_ *rand.Rand, s string) string { return e.encode(s) })
	}
	for _, enc := range []func(string) string{
		func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) },
		func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) },
		func(s string) string { return base32.StdEncoding.EncodeToString([]byte(s)) },
		func(s string) string { return hex.EncodeToString([]byte(s)) },
		func(s string) string { return strings.ToUpper(hex.EncodeToString([]byte(s))) },
	} {
		forms = append(forms, func(rng *rand.Rand, s string) string { return wrapRandom(rng, enc(s)) })
	}
	lf := func(s string) string { return strings.ReplaceAll(s, "\r\n", "\n") }
	return append(forms,
		func(_ *rand.Rand, s string) string { return strings.ReplaceAll(lf(s), "\n", "\r\n") },
		func(_ *rand.Rand, s string) string { return lf(s) },
		func(rng *rand.Rand, s string) string { return xxdDump([]byte(s), rng.IntN(2) == 0) },
		func(_ *rand.Rand, s string) string { return hexdumpC([]byte(s)) },
		func(rng *rand.Rand, s string) string { return odDump([]byte(s), rng.IntN(2) == 0) },
		func(_ *rand.Rand, s string) string { return utf16Forms(s)[0] },
		func(_ *rand.Rand, s string) string { return utf16Forms(s)[1] },
		func(rng *rand.Rand, s string) string { return cut(rng, s) },
		func(rng *rand.Rand, s string) string { return wrapRandom(rng, hex.EncodeToString([]byte(cut(rng, s)))) },
	)
}

// wrapRandom breaks s into lines of a random width from 1 to 80, with a
// random separator between them.
func wrapRandom(rng *rand.Rand, s string) string {
	seps := []string{"\n", "\r\n", " ", "\t", "  ", "\n\n", " \n", "\n "}
	return wrap(s, 1+rng.IntN(80), seps[rng.IntN(len(seps))])
}

// wrap breaks s into pieces of width bytes joined by sep.
func wrap(s string, width int, sep string) string {
	var b strings.Builder
	for i := 0; i < len(s); i += width {
		if i > 0 {
			b.WriteString(sep)
		}
		b.WriteString(s[i:min(i+width, len(s))])
	}
	return b.String()
}

// cut returns a random piece of s.
func cut(rng *rand.Rand, s string) string {
	i := rng.IntN(len(s) + 1)
	j := i + rng.IntN(len(s)-i+1)
	return s[i:j]
}

// textColumn returns b as a dump's text column shows it: printable ASCII
// as is, everything else as '.'.
func textColumn(b []byte) string {
	out := make([]byte, len(b))
	for i, c := range b {
		out[i] = '.'
		if c >= 0x20 && c < 0x7f {
			out[i] = c
		}
	}
	return string(out)
}

// xxdDump writes data as xxd does: an offset and ':', 16 bytes a line in
// groups of two, then two spaces and the text column.
func xxdDump(data []byte, upper bool) string {
	var b strings.Builder
	for off := 0; off < len(data); off += 16 {
		line := data[off:min(off+16, len(data))]
		fmt.Fprintf(&b, "%08x:", off)
		var h strings.Builder
		for i, c := range line {
			if i%2 == 0 {
				h.WriteByte(' ')
			}
			fmt.Fprintf(&h, "%02x", c)
		}
		hx := h.String()
		if upper {
			hx = strings.ToUpper(hx)
		}
		fmt.Fprintf(&b, "%-40s  %s\n", hx, textColumn(line))
	}
	return b.String()
}

// hexdumpC writes data as hexdump -C does: an offset, two spaces, 16 bytes
// a line with an extra space after the eighth, the text column between
// bars, and the length alone on the last line.
func hexdumpC(data []byte) string {
	var b strings.Builder
	for off := 0; off < len(data); off += 16 {
		line := data[off:min(off+16, len(data))]
		var h strings.Builder
		for i, c := range line {
			if i == 8 {
				h.WriteByte(' ')
			}
			fmt.Fprintf(&h, "%02x ", c)
		}
		fmt.Fprintf(&b, "%08x  %-49s |%s|\n", off, h.String(), textColumn(line))
	}
	fmt.Fprintf(&b, "%08x\n", len(data))
	return b.String()
}

// odDump writes data as od -tx1 does (with offsets in octal) or as
// od -An -tx1 does (without).
func odDump(data []byte, offsets bool) string {
	var b strings.Builder
	for off := 0; off < len(data); off += 16 {
		if offsets {
			fmt.Fprintf(&b, "%07o", off)
		}
		for _, c := range data[off:min(off+16, len(data))] {
			fmt.Fprintf(&b, " %02x", c)
		}
		b.WriteByte('\n')
	}
	if offsets {
		fmt.Fprintf(&b, "%07o\n", len(data))
	}
	return b.String()
}

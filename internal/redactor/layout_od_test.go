package redactor

import (
	"encoding/hex"
	"strings"
	"testing"
)

// TestHexCutReadsLikeOdOffset cuts the hex of a secret, wrapped at 76
// columns, seven digits into a line, and follows them with a space: when
// the seven are octal digits the line reads like od's offset column, and
// they were skipped as one, so a cut showing 11 bytes of the secret on the
// line before and 3.5 more on that line was matched as the 11 alone, which
// a cut may show, and up to 15 bytes showed. Seven octal digits and a
// space are od's offset only on the first line of a dump (offset 0) or
// after a line with a smaller offset.
func TestHexCutReadsLikeOdOffset(t *testing.T) {
	cases := 0
	for _, sec := range append(layoutSecrets, struct{ name, value string }{"octal tail", "Zq8wXv3KpL0mEGGSwQ4VxTuEe"}) {
		r := New([]string{sec.value})
		for filler := range 76 {
			full := hex.EncodeToString([]byte(fillerText(filler) + sec.value))
			for cut := 76 + 7; cut <= len(full); cut += 76 {
				if cut-7 <= 2*filler || strings.Trim(full[cut-7:cut], "01234567") != "" {
					continue
				}
				cases++
				for _, tail := range []string{" (cut)\n", " \n", " "} {
					text := wrap(full[:cut], 76, "\n") + tail
					got := r.Redact(text)
					// The line break splits the hex: read it joined.
					if how := leak(strings.ReplaceAll(got, "\n", ""), sec.value); how != "" {
						t.Errorf("%s, filler %d, cut %d, tail %q: the secret survives as %s", sec.name, filler, cut, tail, how)
					}
					if d := mismatch(naiveRedact(r.patterns, text), got); d != "" {
						t.Errorf("%s, filler %d, cut %d: redactor differs from reference: %s", sec.name, filler, cut, d)
					}
					if d := mismatch(got, writeSplit(t, r, text, []int{1})); d != "" {
						t.Errorf("%s, filler %d, cut %d: Writer byte by byte differs from Redact: %s", sec.name, filler, cut, d)
					}
				}
			}
		}
	}
	if cases == 0 {
		t.Fatal("no cut ends seven octal digits into a line; the test proves nothing")
	}
}

// TestOdOffsetsStillSkipped checks that od's own offset column is still
// skipped, from offset 0 and from a later one (od -j), so a secret whose
// bytes span od's lines is still seen whole.
func TestOdOffsetsStillSkipped(t *testing.T) {
	const secret = "sk-live-Xq7Lm2Np9Rt4Vw8Yz1Bc5Df3Gh6Jk"
	r := New([]string{secret})
	for offset := range 18 {
		data := []byte(fillerText(offset) + secret + "\n" + fillerText(20))
		dump := odDump(data, true)
		checkHidden(t, secret, dump)
		// od -j: the same lines from a later first offset.
		var skipped strings.Builder
		for _, line := range strings.SplitAfter(dump, "\n") {
			if len(line) >= 8 && line[7] == ' ' || len(line) == 8 {
				var v uint32
				for _, c := range []byte(line[:7]) {
					v = v<<3 | uint32(c-'0')
				}
				line = octal7(v+0o1000) + line[7:]
			}
			skipped.WriteString(line)
		}
		got := r.Redact(skipped.String())
		if how := leak(got, secret); how != "" {
			t.Errorf("offset %d, od -j: the secret survives as %s", offset, how)
		}
	}
}

// octal7 writes v as od writes an offset: seven octal digits.
func octal7(v uint32) string {
	b := []byte("0000000")
	for i := 6; i >= 0; i-- {
		b[i] = byte('0' + v&7)
		v >>= 3
	}
	return string(b)
}

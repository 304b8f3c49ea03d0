package redactor

import (
	"encoding/base32"
	"encoding/base64"
	"encoding/hex"
	"strings"
	"testing"
)

// encodedBound returns the longest run of characters of a secret's
// encoded form (bits bits a character: 6 for base64, 5 for base32, 4 for
// hex), each character encoding bits of the secret alone, that can pass
// the redactor when the encoded patterns are the forms of pieces of size
// bytes every step bytes (see encodedPiece).
func encodedBound(size, step, bits int) int {
	return (8*size + 8*step - 2*bits) / bits
}

func TestEncodedBound(t *testing.T) {
	// The figures New's doc and docs/performance.md state: base64 and
	// base32 for fragments of 12 bytes and of 8, and hex (the fragments
	// themselves, every byte).
	for _, c := range []struct{ f, bits, want int }{
		{12, 6, 15}, {12, 5, 18}, {8, 6, 10}, {8, 5, 12},
	} {
		size, step := encodedPiece(c.f)
		if got := encodedBound(size, step, c.bits); got != c.want {
			t.Errorf("fragments of %d: bound %d for %d bits a character, want %d", c.f, got, c.bits, c.want)
		}
	}
	if got := encodedBound(12, 1, 4); got != 24 {
		t.Errorf("hex of fragments of 12: bound %d, want 24", got)
	}
}

// TestEncodedFragments cuts the base64 (standard and URL-safe, padded and
// not), base32 (padded and not) and hex (either case) form of a stream that carries a secret
// at every alignment, contiguous and wrapped at 76 columns, at every start
// and end, and wants every cut that holds more than encodedBound
// characters encoding the secret's non-public bytes alone redacted, so
// that no such run survives; and, for secrets with fragments of
// fragmentLength bytes, some cut of exactly encodedBound such characters
// kept (the bound is exact).
func TestEncodedFragments(t *testing.T) {
	jwtHeader := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
	jwtPayload := base64.RawURLEncoding.EncodeToString([]byte(`{"sub":"user-4711","iat":1767225600}`))
	secrets := []struct{ name, value string }{
		{"shortest", "Zq8wXv3K"},
		{"16 bytes", "Zq8wXv3KpL0mNb7T"},
		{"24 bytes", "Xq7Lm2Np9Rt4Vw8Yz1Bc5Df3"},
		{"40 bytes with a public prefix", "ghp_" + "Xq7Lm2Np9Rt4Vw8Yz1Bc5Df3Gh6Jk0Qs2Ua4"},
		{"64 bytes", `Tr0ub4dor&3-Xq7Lm2Np9Rt4/Vw8Yz1Bc5Df3+Gh6Jk0Qs2Ua4Wc!#$%^&*()_=~`},
		{"100 bytes", "PtYgjmUhBel31iEl2hpChYgCfrL1spNxnyVmihA_2O76UMFxFkM_R5Kjp1vRt-1fjORS_6ilI8ihN5KXSc7Tvo_hBKqFYY_kv5ZJ"},
		{"bot token", "123456789:AAXq7Lm2Np9Rt4Vw8Yz1Bc5Df3Gh6Jk0Qs2U"},
		{"JWT", jwtHeader + "." + jwtPayload + ".Xq7Lm2Np9Rt4Vw8Yz1Bc5Df3Gh6Jk0Qs2Ua4Wc6Ye8"},
		{"multi-line", "first-line-Xq7Lm2Np9Rt4\nsecond-line-Vw8Yz1Bc5Df3"},
	}
	encodings := []struct {
		name   string
		bits   int
		period int
		encode func([]byte) string
	}{
		{"base64", 6, 3, base64.StdEncoding.EncodeToString},
		{"base64 unpadded", 6, 3, base64.RawStdEncoding.EncodeToString},
		{"base64url", 6, 3, base64.URLEncoding.EncodeToString},
		{"base64url unpadded", 6, 3, base64.RawURLEncoding.EncodeToString},
		{"base32", 5, 5, base32.StdEncoding.EncodeToString},
		{"base32 unpadded", 5, 5, base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString},
		{"hex", 4, 1, hex.EncodeToString},
		{"hex upper case", 4, 1, func(b []byte) string { return strings.ToUpper(hex.EncodeToString(b)) }},
	}
	for _, sc := range secrets {
		r := New([]string{sc.value})
		f := fragmentLen(len(sc.value))
		first := publicLen(sc.value) // the first byte that is not public
		for _, enc := range encodings {
			size, step := encodedPiece(f)
			if enc.bits == 4 {
				size, step = f, 1 // the hex of every fragment
			}
			bound := encodedBound(size, step, enc.bits)
			exact := false
			for align := range enc.period {
				for _, width := range []int{0, 76} {
					if enc.bits == 4 && width != 0 {
						// A last line of 7 octal digits and a space reads
						// as an od offset column (see encChannel);
						// TestFragments wraps hex at 7 columns.
						continue
					}
					pre := enc.period + align // bytes before the secret
					stream := "\x00\xff\x01p\x02r\x03e\x04"[:pre] + sc.value + "\xfe-tail"
					e := enc.encode([]byte(stream))
					// Characters lo to hi-1 encode non-public bytes of
					// the secret alone.
					lo := (8*(pre+first) + enc.bits - 1) / enc.bits
					hi := 8 * (pre + len(sc.value)) / enc.bits
					text, at := wrapAt(e, width)
					checked, failed := 0, 0
					for a := max(0, lo-1); a <= hi; a++ {
						for b := a + 1; b <= min(hi+1, len(e)); b++ {
							pure := min(b, hi) - max(a, lo)
							if pure < bound {
								continue
							}
							in := "name: " + text[at[a]:at[b-1]+1] + " (cut)"
							got := r.Redact(in)
							if pure == bound {
								if got == in && a >= lo && b <= hi {
									exact = true
								}
								continue
							}
							checked++
							if survivor := survivingRun(got, e[lo:hi], bound+1); survivor >= 0 && failed < 5 {
								failed++
								t.Errorf("%s (%d bytes, fragments of %d)/%s/alignment %d/width %d: the cut of characters %d to %d (%d encoding the secret alone, bound %d) keeps the run of %d from character %d",
									sc.name, len(sc.value), f, enc.name, align, width, a, b, pure, bound, bound+1, lo+survivor)
							}
						}
					}
					if checked == 0 && hi-lo > bound {
						t.Errorf("%s/%s/alignment %d: no cut checked", sc.name, enc.name, align)
					}
				}
			}
			if f == fragmentLength && !exact {
				t.Errorf("%s/%s: every cut of %d characters was redacted: the bound is not exact", sc.name, enc.name, bound)
			}
		}
	}
}

// wrapAt returns s wrapped at width columns with "\n" (s itself for width
// 0) and the position of each of s's characters in it.
func wrapAt(s string, width int) (string, []int) {
	at := make([]int, len(s))
	if width == 0 {
		for i := range at {
			at[i] = i
		}
		return s, at
	}
	var b strings.Builder
	for i := range len(s) {
		if i > 0 && i%width == 0 {
			b.WriteByte('\n')
		}
		at[i] = b.Len()
		b.WriteByte(s[i])
	}
	return b.String(), at
}

// survivingRun returns the offset in form of a run of n characters that
// out still shows (whitespace removed, between tokens), or -1.
func survivingRun(out, form string, n int) int {
	out = strings.Join(strings.Fields(out), "")
	for _, piece := range strings.Split(out, Token) {
		for i := 0; i+n <= len(form); i++ {
			if strings.Contains(piece, form[i:i+n]) {
				return i
			}
		}
	}
	return -1
}

package redactor

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
)

// fuzzSecrets turns a fuzz argument into at most four secrets of at most 64
// bytes, valid UTF-8 (host secrets come from environment variables).
func fuzzSecrets(blob string) []string {
	var secrets []string
	for s := range strings.SplitSeq(blob, "\x00") {
		s = strings.ToValidUTF8(s, "?")
		if len(s) > 64 {
			s = s[:64]
			s = strings.ToValidUTF8(s, "")
		}
		if len(s) >= MinimumSecretLength && len(secrets) < 4 {
			secrets = append(secrets, s)
		}
	}
	return secrets
}

// buildText interleaves pieces of filler with the secrets in random forms,
// each encoded together with a random prefix and suffix of 0 to 5 bytes.
func buildText(rng *rand.Rand, secrets []string, filler string, forms []form) string {
	const affix = "abcXYZ019 ._-~=:"
	var b strings.Builder
	rest := filler
	for range 1 + rng.IntN(6) {
		cut := 0
		if len(rest) > 0 {
			cut = rng.IntN(len(rest) + 1)
		}
		b.WriteString(rest[:cut])
		rest = rest[cut:]
		var prefix, suffix []byte
		for range rng.IntN(6) {
			prefix = append(prefix, affix[rng.IntN(len(affix))])
		}
		for range rng.IntN(6) {
			suffix = append(suffix, affix[rng.IntN(len(affix))])
		}
		secret := secrets[rng.IntN(len(secrets))]
		b.WriteString(forms[rng.IntN(len(forms))](rng, string(prefix)+secret+string(suffix)))
	}
	b.WriteString(rest)
	return b.String()
}

// FuzzRedact checks that no secret survives, raw, in a run that decodes
// back to it (through separators, wrapping at random widths and dump
// layouts), or as a fragment raw or in hex, whatever the secrets and
// wherever their forms sit in the text, and that the redactor agrees with
// the strings.Index reference.
func FuzzRedact(f *testing.F) {
	f.Add("ghp_abcdefghijklmnop1234", "some log text here", uint64(1))
	f.Add("abcdefgh\x00efghijkl\x00bcdefghijklmnopqrstu", "aaaa abcdefgh", uint64(2))
	f.Add("line1234\nline5678\r\nend\x00p@ss w/rd&\"x\"+<y>?é", "multi\nline\r\nfiller", uint64(3))
	f.Add("\x01\x02\x03\x04\x05\x06\x07\x08\t", "", uint64(4))
	forms := fuzzForms()
	f.Fuzz(func(t *testing.T, blob, filler string, seed uint64) {
		secrets := fuzzSecrets(blob)
		if len(secrets) == 0 {
			return
		}
		if len(filler) > 4096 {
			filler = filler[:4096]
		}
		// Filler holds no escape characters, so that a run which decodes
		// back to a secret can only come from an inserted form.
		filler = strings.NewReplacer("%", "_", "\\", "_", "+", "_").Replace(filler)
		r := New(secrets)
		text := buildText(rand.New(rand.NewPCG(seed, seed>>32)), secrets, filler, forms)
		got := r.Redact(text)
		if d := mismatch(naiveRedact(r.patterns, text), got); d != "" {
			t.Fatalf("redactor differs from reference: %s", d)
		}
		for i, s := range secrets {
			if how := leak(got, s); how != "" {
				t.Fatalf("secret %d (length %d) survives as %s", i, len(s), how)
			}
		}
	})
}

// FuzzWriter checks that the Writer's output is Redact of the whole input
// however the writes split it, and that it never holds back more than the
// longest pattern's length minus one byte.
func FuzzWriter(f *testing.F) {
	f.Add("ghp_abcdefghijklmnop1234", []byte("log ghp_abcdefghijklmnop1234 more"), []byte{1})
	f.Add("abcdefgh\x00efghijkl\x00bcdefghijklmnopqrstu", []byte("abcdefghijklmnopqrstuv abcdefgh"), []byte{3, 1, 200, 7})
	f.Add("line1234\nline5678", []byte("x line1234\r\nline5678 y line1234"), []byte{0, 5, 9})
	forms := fuzzForms()
	f.Fuzz(func(t *testing.T, blob string, input, splits []byte) {
		secrets := fuzzSecrets(blob)
		if len(secrets) == 0 || len(input) > 1<<14 {
			return
		}
		seed := uint64(len(input))
		for _, b := range splits {
			seed = seed*131 + uint64(b)
		}
		text := buildText(rand.New(rand.NewPCG(seed, 7)), secrets, string(input), forms)
		r := New(secrets)
		want := r.Redact(text)

		var out bytes.Buffer
		w := r.NewWriter(&out)
		for i, k := 0, 0; i < len(text); k++ {
			n := 1
			if len(splits) > 0 {
				n = int(splits[k%len(splits)])%23 + 1
			}
			n = min(n, len(text)-i)
			if _, err := w.Write([]byte(text[i : i+n])); err != nil {
				t.Fatal(err)
			}
			i += n
			if bound := holdBound(r); len(w.held) > bound {
				t.Fatalf("holds %d bytes, at most %d expected", len(w.held), bound)
			}
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if d := mismatch(want, out.String()); d != "" {
			t.Fatalf("Writer output differs from Redact: %s", d)
		}
	})
}

// FuzzRedactPartial checks RedactPartial on every prefix of a random text
// holding secrets in every form, as the snapshots of a command printing it
// slowly would be: no snapshot holds a complete pattern (a secret, or one of
// its encoded forms), and a snapshot of text with no complete pattern is
// exactly that text up to where a match may still be in progress (found
// here by brute force, see pendingStart), so a secret still being printed
// never shows.
func FuzzRedactPartial(f *testing.F) {
	f.Add("ghp_abcdefghijklmnop1234", "some log text here", uint64(1))
	f.Add("abcdefgh\x00efghijkl\x00bcdefghijklmnopqrstu", "aaaa abcdefgh", uint64(2))
	f.Add("line1234\nline5678\r\nend", "multi\nline\r\nfiller", uint64(3))
	forms := fuzzForms()
	f.Fuzz(func(t *testing.T, blob, filler string, seed uint64) {
		secrets := fuzzSecrets(blob)
		if len(secrets) == 0 {
			return
		}
		if len(filler) > 512 {
			filler = filler[:512]
		}
		r := New(secrets)
		text := buildText(rand.New(rand.NewPCG(seed, seed>>32)), secrets, filler, forms)
		// Every snapshot is checked by brute force: keep it affordable.
		text = text[:min(len(text), 768)]
		for i := 0; i <= len(text); i++ {
			snap := text[:i]
			got := r.RedactPartial(snap)
			if n := completePattern(r.patterns, got); n > 0 {
				t.Fatalf("snapshot %d holds a complete pattern of length %d", i, n)
			}
			if r.Redact(snap) != snap {
				continue // complete matches: the token rules are Redact's
			}
			if want := snap[:pendingStart(r.patterns, snap)]; got != want {
				t.Fatalf("snapshot %d: RedactPartial kept %d bytes, want %d (the text less its pending match start)", i, len(got), len(want))
			}
		}
	})
}

// completePattern returns the length of a pattern that s holds complete
// (raw, or encoded in the symbols the layout rules keep), 0 when none.
func completePattern(ps patternSet, s string) int {
	for _, p := range ps.raw {
		if strings.Contains(s, p) {
			return len(p)
		}
	}
	syms, _ := refSymbols(s)
	for _, p := range ps.encoded {
		if strings.Contains(syms, p) {
			return len(p)
		}
	}
	return 0
}

// pendingStart returns, by brute force, the earliest position of s from
// which a match may still be in progress at its end: the start of its
// longest ending that begins a raw pattern; the first symbol of the longest
// run of symbols at its end (not followed by more than maxGap skipped bytes)
// that begins an encoded pattern; the first of up to maxOffsetDigits hex
// digits that start its last line and may yet be an offset column (eight
// and a space may yet be hexdump -C's).
func pendingStart(ps patternSet, s string) int {
	cut := len(s)
	for _, p := range ps.raw {
		for k := min(len(p), len(s)); k > len(s)-cut; k-- {
			if strings.HasSuffix(s, p[:k]) {
				cut = len(s) - k
				break
			}
		}
	}
	lineStart := strings.LastIndexByte(s, '\n') + 1
	j := lineStart
	for j < len(s) && (s[j] == ' ' || s[j] == '\t') {
		j++
	}
	held := len(s)
	isHex := func(s string) bool { return strings.Trim(s, "0123456789abcdefABCDEF") == "" }
	rest := s[j:]
	if rest != "" && len(rest) <= maxOffsetDigits && isHex(rest) || len(rest) == 9 && rest[8] == ' ' && isHex(rest[:8]) {
		held = j // digits that may yet be an offset column, or eight and a space
	}
	if u := refUndecided(s); u >= 0 {
		held = min(held, u) // an xxd text column that may yet be data
	}
	syms, pos := refSymbols(s[:held])
	lastSkipped := held - 1
	if len(pos) == 0 || lastSkipped-pos[len(pos)-1] > maxGap {
		return min(cut, held)
	}
	best := len(syms)
	for _, p := range ps.encoded {
		for k := min(len(p), len(syms)); k > len(syms)-best; k-- {
			if strings.HasSuffix(syms, p[:k]) {
				best = len(syms) - k
				break
			}
		}
	}
	if best < len(syms) {
		cut = min(cut, pos[best])
	}
	return min(cut, held)
}

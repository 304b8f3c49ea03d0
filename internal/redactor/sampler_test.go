package redactor

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestInsertSpan(t *testing.T) {
	base := []span{{10, 20}, {30, 40}, {50, 60}}
	tests := []struct {
		name       string
		start, end int
		floor      int
		want       []span
	}{
		{"after all", 70, 80, 0, []span{{10, 20}, {30, 40}, {50, 60}, {70, 80}}},
		{"before all", 1, 5, 0, []span{{1, 5}, {10, 20}, {30, 40}, {50, 60}}},
		{"between", 22, 28, 0, []span{{10, 20}, {22, 28}, {30, 40}, {50, 60}}},
		{"touches two", 20, 30, 0, []span{{10, 40}, {50, 60}}},
		{"covers all", 0, 100, 0, []span{{0, 100}}},
		{"inside one", 32, 35, 0, []span{{10, 20}, {30, 40}, {50, 60}}},
		{"overlaps the last", 55, 65, 0, []span{{10, 20}, {30, 40}, {50, 65}}},
		{"clipped at floor", 60, 70, 65, []span{{10, 20}, {30, 40}, {50, 60}, {65, 70}}},
		{"before floor", 1, 5, 5, []span{{10, 20}, {30, 40}, {50, 60}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := insertSpan(append([]span(nil), base...), tt.start, tt.end, tt.floor)
			if d := cmp.Diff(tt.want, got, cmp.AllowUnexported(span{})); d != "" {
				t.Errorf("insertSpan(%d, %d) (-want +got):\n%s", tt.start, tt.end, d)
			}
		})
	}
}

// TestSamplerBlocks puts secrets in every form at random places of a text
// whose symbol stream fills the encoded channel's buffer many times over,
// so that matches straddle its blocks at every offset, and wants Redact to
// agree with the reference, nothing to survive, and the Writer to agree
// with Redact for several splits.
func TestSamplerBlocks(t *testing.T) {
	secrets := []string{"abcdefgh", "sk-proj-Zx81kQ0pLmN3vB7cR2tY9wE4uI6oPaSd", "correct-horse-battery-staple", "1234567890:AAxyzXYZ_-0987654321abcdefghij"}
	r := New(secrets)
	forms := fuzzForms()
	rng := rand.New(rand.NewPCG(18, 2048))
	filler := strings.Repeat("word more text here 0123 | x ", 40)
	var b strings.Builder
	for b.Len() < 20*encBuf {
		b.WriteString(buildText(rng, secrets, filler[:rng.IntN(len(filler))], forms))
		b.WriteByte('\n')
	}
	text := b.String()
	got := r.Redact(text)
	if n := strings.Count(got, Token); n < 100 {
		t.Fatalf("%d tokens in %d bytes: the text should hold hundreds of forms", n, len(text))
	}
	if d := mismatch(naiveRedact(r.patterns, text), got); d != "" {
		t.Fatalf("redactor differs from reference: %s", d)
	}
	for i, s := range secrets {
		if how := leak(got, s); how != "" {
			t.Errorf("secret %d (length %d) survives as %s", i, len(s), how)
		}
	}
	for _, sizes := range [][]int{{1}, {7, 300, 13}, {encBuf - 1}, {32 << 10}} {
		if d := mismatch(got, writeSplit(t, r, text, sizes)); d != "" {
			t.Errorf("Writer in pieces of %v differs from Redact: %s", sizes, d)
		}
	}
}

// TestSamplerBlockEdge puts each encoded form of a secret across the end of
// the encoded channel's first full buffer at every offset.
func TestSamplerBlockEdge(t *testing.T) {
	secret := "1234567890:AAxyzXYZ_-0987654321abcdefghij"
	r := New([]string{secret})
	for _, form := range encodedForms(secret) {
		for o := 1; o < len(form); o++ {
			text := strings.Repeat(".", encBuf-o) + form + "\n"
			got := r.Redact(text)
			if d := mismatch(naiveRedact(r.patterns, text), got); d != "" {
				t.Fatalf("form of length %d at %d symbols before the block end: redactor differs from reference: %s", len(form), o, d)
			}
			if how := leak(got, secret); how != "" {
				t.Fatalf("form of length %d at %d symbols before the block end survives as %s", len(form), o, how)
			}
		}
	}
}

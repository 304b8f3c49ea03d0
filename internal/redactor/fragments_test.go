package redactor

import (
	"encoding/hex"
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestFragments puts pieces of a secret (from its start, middle and end,
// one byte shorter than a fragment, exactly one, longer, and all but one
// byte) at the start, in the middle and at the end of a text, raw and in
// hex (contiguous and wrapped), and checks Redact, a Writer fed a byte at
// a time, and RedactPartial of the whole: a piece of a fragment or more
// leaves no fragment behind, a shorter one is kept.
func TestFragments(t *testing.T) {
	for _, secret := range []string{"sk-live-Xq7Lm2Np9Rt4Vw8Yz1Bc5Df3Gh6Jk", "Zq8wXv3KpL0mNb7T"} {
		k := fragmentLen(len(secret))
		r := New([]string{secret})
		for _, n := range []int{k - 1, k, k + 3, len(secret) - 1} {
			for _, from := range []struct {
				name string
				at   int
			}{{"start", 0}, {"middle", (len(secret) - n) / 2}, {"end", len(secret) - n}} {
				piece := secret[from.at : from.at+n]
				for _, form := range []struct {
					name string
					text string
				}{
					{"raw", piece},
					{"hex", hex.EncodeToString([]byte(piece))},
					{"hex wrapped", wrap(strings.ToUpper(hex.EncodeToString([]byte(piece))), 7, "\n")},
				} {
					for _, where := range []struct {
						name, before, after string
					}{
						{"stream start", "", " and more output\n"},
						{"stream middle", "output: ", " and more\n"},
						{"stream end", "output ends: ", ""},
					} {
						name := fmt.Sprintf("len %d/%d bytes from the %s/%s/at the %s", len(secret), n, from.name, form.name, where.name)
						t.Run(name, func(t *testing.T) {
							in := where.before + form.text + where.after
							got := r.Redact(in)
							if d := mismatch(got, writeSplit(t, r, in, []int{1})); d != "" {
								t.Fatalf("Writer differs from Redact: %s", d)
							}
							if n < k {
								if got != in {
									t.Fatalf("a piece of %d bytes, fewer than a fragment (%d), was redacted", n, k)
								}
								return
							}
							if !strings.Contains(got, Token) {
								t.Fatalf("a piece of %d bytes was not redacted", n)
							}
							if how := leak(got, secret); how != "" {
								t.Fatalf("the piece survives as %s", how)
							}
							if how := leak(r.RedactPartial(in), secret); how != "" {
								t.Fatalf("RedactPartial lets the piece survive as %s", how)
							}
						})
					}
				}
			}
		}
	}
}

// TestFragmentsInATail cuts, with the real head and tail, the output of
// printing the secret over and over at every offset of one line, and
// checks that neither the head nor the tail of it shows a fragment: the
// cut ends or starts inside a secret.
func TestFragmentsInATail(t *testing.T) {
	const secret = "sk-live-Xq7Lm2Np9Rt4Vw8Yz1Bc5Df3Gh6Jk"
	r := New([]string{secret})
	output := strings.Repeat(secret+"\n", 100)
	line := len(secret) + 1
	for _, tool := range []string{"head", "tail"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed: %v", tool, err)
		}
		for cut := range line {
			size := fmt.Sprint(50*line + cut)
			got := r.Redact(runTool(t, []byte(output), tool, "-c", size))
			if how := leak(got, secret); how != "" {
				t.Fatalf("%s -c %s: a piece of the secret survives as %s", tool, size, how)
			}
			// Only a piece shorter than a fragment may remain, at the cut.
			if rest := strings.ReplaceAll(strings.ReplaceAll(got, Token, ""), "\n", ""); len(rest) >= fragmentLen(len(secret)) {
				t.Fatalf("%s -c %s: %d bytes besides the tokens", tool, size, len(rest))
			}
		}
	}
}

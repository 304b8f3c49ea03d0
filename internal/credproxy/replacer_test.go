package credproxy_test

import (
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/credproxy"
)

func TestReplacingBody(t *testing.T) {
	replace := map[string]string{"REALVALUE123": "standin-4567", "REALVALUE123XYZ": "longer-one-xyz1", "QkFTSUNQQUlS": "c3RhbmRpbg=="}
	tests := []struct{ in, want string }{
		{"", ""},
		{"nothing here", "nothing here"},
		{"REALVALUE123", "standin-4567"},
		{"a REALVALUE123 b REALVALUE123", "a standin-4567 b standin-4567"},
		{"REALVALUE123XYZ!", "longer-one-xyz1!"},
		{"REALVALUE12 almost", "REALVALUE12 almost"},
		{"xQkFTSUNQQUlSREALVALUE123", "xc3RhbmRpbg==standin-4567"},
		{strings.Repeat("z", 100000) + "REALVALUE123" + strings.Repeat("y", 70000), strings.Repeat("z", 100000) + "standin-4567" + strings.Repeat("y", 70000)},
	}
	for _, tt := range tests {
		for name, wrap := range map[string]func(io.Reader) io.Reader{
			"whole":    func(r io.Reader) io.Reader { return r },
			"one byte": iotest.OneByteReader,
			"half":     iotest.HalfReader,
		} {
			b := credproxy.NewReplacingBody(io.NopCloser(wrap(strings.NewReader(tt.in))), replace)
			got, err := io.ReadAll(iotest.OneByteReader(b))
			if err != nil {
				t.Fatal(err)
			}
			if len(tt.in) < 100 {
				if diff := cmp.Diff(tt.want, string(got)); diff != "" {
					t.Errorf("%s, %q: (-want +got)\n%s", name, tt.in, diff)
				}
			} else if string(got) != tt.want {
				t.Errorf("%s: a long body came out wrong (%d bytes, want %d)", name, len(got), len(tt.want))
			}
		}
	}
}

// replaceReference is what a replacing body must give for in: at each
// offset the longest pattern that starts there is replaced, and the scan
// goes on after it.
func replaceReference(in string, replace map[string]string) string {
	var out strings.Builder
	for i := 0; i < len(in); {
		best := ""
		for p := range replace {
			if len(p) > len(best) && strings.HasPrefix(in[i:], p) {
				best = p
			}
		}
		if best == "" {
			out.WriteByte(in[i])
			i++
			continue
		}
		out.WriteString(replace[best])
		i += len(best)
	}
	return out.String()
}

// chunkReader reads at most n bytes at a time into the caller's buffer,
// whatever its size, as a bufio.Writer's ReadFrom asks.
type chunkReader struct {
	r io.Reader
	n int
}

func (c chunkReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// TestReplacingBodyAgainstReference streams bodies made of the patterns'
// own bytes (so the anchor byte is everywhere, partial matches are at
// every read's end, and the scan falls back to bytes.Index) through every
// size of source read and of the reader's buffer, and compares with the
// reference: no real value may come through.
func TestReplacingBodyAgainstReference(t *testing.T) {
	replace := map[string]string{"QaQaQbQa": "xxxxxxx1", "QaQbQaQaQc": "yyyyyyyyy2", "aQaQaQaQaQaQaQaQaQaQ": "zzzzzzzzzzzzzzzzzzz3"}
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"Q", "a", "b", "c", "Qa", "QaQaQbQa", "QaQbQaQaQc", "aQaQaQaQaQaQaQaQaQaQ", "-"}
	for round := range 300 {
		var in strings.Builder
		for range rng.IntN(2000) {
			in.WriteString(pieces[rng.IntN(len(pieces))])
		}
		want := replaceReference(in.String(), replace)
		src := []int{1, 3, 17, 4096, 1 << 20}[round%5]
		dst := []int{1, 5, 41, 100, 32 << 10}[(round/5)%5]
		b := credproxy.NewReplacingBody(io.NopCloser(chunkReader{strings.NewReader(in.String()), src}), replace)
		got, err := io.ReadAll(chunkReader{b, dst})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Fatalf("round %d (source reads of %d, reads of %d): the body came out wrong", round, src, dst)
		}
		for p := range replace {
			if strings.Contains(string(got), p) != strings.Contains(want, p) {
				t.Fatalf("round %d: a pattern came through", round)
			}
		}
	}
}

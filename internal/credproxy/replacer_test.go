package credproxy_test

import (
	"io"
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

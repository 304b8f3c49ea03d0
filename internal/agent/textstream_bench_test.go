package agent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// BenchmarkTurnDeltas measures a turn's answer streamed as a model streams
// it (4 KiB of Markdown in deltas of about a token, 4 bytes) through the
// turn's text stream, against handing each delta on as it came, in the
// same run: "direct" is the baseline (the loop before the stream
// redacted), "no secrets" the stream over an empty redactor (what a host
// without secrets pays), "10 secrets" the stream redacting. One op is one
// answer, flushed at its end.
func BenchmarkTurnDeltas(b *testing.B) {
	secrets := make([]string, 10)
	for i := range secrets {
		secrets[i] = fmt.Sprintf("sk-bench-secret-%02d-0123456789abcdef", i)
	}
	var text strings.Builder
	for i := 0; text.Len() < 4096; i++ {
		fmt.Fprintf(&text, "- Step %d: ran `go test ./...` in the workspace; **all** passed, see [the log](https://example.com/log/%d).\n", i, i)
	}
	var deltas []string
	for s := text.String(); len(s) > 0; {
		n := min(4, len(s))
		deltas, s = append(deltas, s[:n]), s[n:]
	}
	shown := 0
	emit := func(d string) { shown += len(d) }
	b.Run("direct", func(b *testing.B) {
		b.SetBytes(int64(text.Len()))
		for b.Loop() {
			for _, d := range deltas {
				emit(d)
			}
		}
	})
	for _, tc := range []struct {
		name string
		red  *redactor.Redactor
	}{
		{"no secrets", redactor.New(nil)},
		{"10 secrets", redactor.New(secrets)},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(int64(text.Len()))
			for b.Loop() {
				t := newTextStream(tc.red, emit)
				for _, d := range deltas {
					t.write(d)
				}
				t.flush()
			}
		})
	}
	if shown == 0 {
		b.Fatal("nothing was emitted")
	}
}

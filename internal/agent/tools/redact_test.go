package tools

import (
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// TestRedactStream checks that a redactor without patterns leaves the
// writer unwrapped, and that one with patterns redacts what reaches it.
func TestRedactStream(t *testing.T) {
	tests := []struct {
		name string
		red  *redactor.Redactor
		// secret is the value the redactor knows, empty when the writer
		// should not be wrapped.
		secret string
	}{
		{name: "nil", red: nil},
		{name: "no secrets", red: redactor.New(nil)},
		{name: "only values too short", red: redactor.New([]string{"short"})},
		{name: "a secret", red: redactor.New([]string{"redact-stream-secret-42"}), secret: "redact-stream-secret-42"},
		{name: "a secret starting with a non-ASCII byte", red: redactor.New([]string{"\xffnon-ascii-secret"}), secret: "\xffnon-ascii-secret"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secret, wantWrap := tt.secret, tt.secret != ""
			var got strings.Builder
			w, closer := redactStream(tt.red, &got)
			if (closer != nil) != wantWrap {
				t.Fatalf("redactStream wrapped the writer: %v, want %v", closer != nil, wantWrap)
			}
			if !wantWrap {
				if w != &got {
					t.Errorf("redactStream returned another writer, want the one it was given")
				}
				return
			}
			for _, part := range []string{"key=" + secret[:5], secret[5:], "\n"} {
				if _, err := w.Write([]byte(part)); err != nil {
					t.Fatalf("Write: %v", err)
				}
			}
			if err := closer.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			if want := "key=" + redactor.Token + "\n"; got.String() != want {
				t.Errorf("the stream became %d bytes, want %q", got.Len(), want)
			}
		})
	}
}

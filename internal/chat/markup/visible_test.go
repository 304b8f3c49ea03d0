package markup

import (
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

func TestVisible(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "hello", "hello"},
		{"tags dropped", "<b>bold</b> and <a href=\"https://e.com\">link</a>", "bold and link"},
		{"entities decoded", "a &lt; b &amp;&amp; c &gt; d &quot;q&quot; &#65;", `a < b && c > d "q" A`},
		{"a tag splitting a word", "sk-har<b>ness</b>key", "sk-harnesskey"},
		{"an unclosed tag stays text", "a <b", "a <b"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, Visible(tt.in)); diff != "" {
				t.Errorf("Visible(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

// Visible agrees with what Telegram shows (telegramtest.ParseHTML) for
// everything RenderHTML makes.
func TestVisibleMatchesTelegram(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	for i := range 2000 {
		out := RenderHTML(randomMarkdown(rng, 1+rng.IntN(40)))
		want, err := telegramtest.ParseHTML(out)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if got := Visible(out); got != want {
			t.Fatalf("case %d: Visible(%q) = %q, Telegram shows %q", i, out, got, want)
		}
	}
}

func TestEscapeText(t *testing.T) {
	if diff := cmp.Diff("a &lt;b&gt; &amp; c", EscapeText("a <b> & c")); diff != "" {
		t.Errorf("EscapeText (-want +got):\n%s", diff)
	}
}

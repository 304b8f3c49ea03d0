package markup

import (
	"math/rand/v2"
	"strings"
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

func TestCutVisible(t *testing.T) {
	tests := []struct {
		name string
		in   string
		n    int
		want string
	}{
		{"all", "<b>ab</b>", 2, "<b>ab</b>"},
		{"inside a tag's text", "x<b>abc</b>y", 2, "x<b>a</b>"},
		{"before an entity that would cross", "a&amp;b", 1, "a"},
		{"an entity counts as its character", "a&amp;b", 2, "a&amp;"},
		{"nested tags closed in order", "<b><i>abc</i></b>", 1, "<b><i>a</i></b>"},
		{"nothing", "<b>abc</b>", 0, "<b></b>"},
		{"a character is never cut", "é", 1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := CutVisible(tt.in, tt.n)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("CutVisible(%q, %d) (-want +got):\n%s", tt.in, tt.n, diff)
			}
		})
	}
}

// A cut of anything RenderHTML makes is valid Telegram HTML whose visible
// text is the start of the whole's.
func TestCutVisibleIsAValidPrefix(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for i := range 2000 {
		out := RenderHTML(randomMarkdown(rng, 1+rng.IntN(40)))
		whole := Visible(out)
		n := rng.IntN(len(whole) + 1)
		cut := CutVisible(out, n)
		shown, err := telegramtest.ParseHTML(cut)
		if err != nil {
			t.Fatalf("case %d: CutVisible(%q, %d) = %q is not valid Telegram HTML: %v", i, out, n, cut, err)
		}
		if len(shown) > n || !strings.HasPrefix(whole, shown) {
			t.Fatalf("case %d: CutVisible(%q, %d) shows %q, not a prefix of %q within %d bytes", i, out, n, shown, whole, n)
		}
	}
}

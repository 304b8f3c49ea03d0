package markup

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// checkParts verifies that every part is valid Telegram HTML within limit and
// returns the parts' visible texts put together.
func checkParts(t *testing.T, parts []string, limit int) string {
	t.Helper()
	var all strings.Builder
	for i, p := range parts {
		if n := UTF16Len(p); n > limit {
			t.Errorf("part %d is %d UTF-16 units long, over %d: %q", i, n, limit, p)
		}
		visible, err := telegramtest.ParseHTML(p)
		if err != nil {
			t.Fatalf("part %d is not valid Telegram HTML: %v\n%q", i, err, p)
		}
		if strings.TrimSpace(visible) == "" {
			t.Errorf("part %d shows no text: %q", i, p)
		}
		all.WriteString(visible)
	}
	return all.String()
}

func TestSplit(t *testing.T) {
	tests := []struct {
		name  string
		split func(string, int) []string
		in    string
		limit int
		want  []string
	}{
		{"fits", SplitMessage, "<b>short</b>", 100, []string{"<b>short</b>"}},
		{"empty", SplitMessage, "", 100, nil},
		{"only white space", SplitMessage, " \n\n ", 100, nil},
		{"paragraph first", SplitMessage, "one two\nthree\n\nfour five", 16, []string{"one two\nthree\n\n", "four five"}},
		{"line before word", SplitMessage, "one two\nthree four", 14, []string{"one two\n", "three four"}},
		{"word", SplitMessage, "one two three four", 10, []string{"one two ", "three four"}},
		{"short boundary passed over", SplitMessage, "a bcdefghijklmnop", 12, []string{"a bcdefghijk", "lmnop"}},
		{"hard break", SplitMessage, "abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"tags closed and reopened", SplitMessage, "<b>aaa bbb ccc</b>", 15, []string{"<b>aaa bbb </b>", "<b>ccc</b>"}},
		{"attributes reopened", SplitMessage, `<a href="https://e.com">aa bb</a>`, 31, []string{`<a href="https://e.com">aa </a>`, `<a href="https://e.com">bb</a>`}},
		{"entity kept whole", SplitMessage, "&amp;&amp;&amp;", 12, []string{"&amp;&amp;", "&amp;"}},
		{"emoji kept whole", SplitMessage, "😀😀😀", 4, []string{"😀😀", "😀"}},
		{"non-positive limit means 4096", SplitMessage, "abc", 0, []string{"abc"}},
		{"plain: markup is text", SplitPlain, "<b>a</b> &amp;", 8, []string{"<b>a</b>", " &amp;"}},
		{"plain: words", SplitPlain, "one two three", 8, []string{"one two ", "three"}},
		{"plain: trailing blank part dropped", SplitPlain, "abcd    ", 4, []string{"abcd"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.split(tt.in, tt.limit)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("split(%q, %d) (-want +got):\n%s", tt.in, tt.limit, diff)
			}
		})
	}
}

func TestUTF16Len(t *testing.T) {
	tests := []struct {
		in   string
		want int
	}{{"", 0}, {"abc", 3}, {"é日", 2}, {"😀", 2}, {"a😀b", 4}}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			if got := UTF16Len(tt.in); got != tt.want {
				t.Errorf("UTF16Len(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestSplitLongAnswerIntoTwoValidParts(t *testing.T) {
	var md strings.Builder
	for md.Len() < 5000 {
		md.WriteString("A **paragraph** with `code` & <angle> _words_, to fill the answer.\n\n")
	}
	out := RenderHTML(md.String())
	parts := SplitMessage(out, MaxMessageLength)
	if len(parts) != 2 {
		t.Fatalf("%d parts, want 2", len(parts))
	}
	whole, err := telegramtest.ParseHTML(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := checkParts(t, parts, MaxMessageLength); got != whole {
		t.Errorf("parts' visible text differs from the whole's")
	}
	if !strings.HasSuffix(parts[0], "\n\n") {
		t.Errorf("first part does not end at a paragraph break: %q", parts[0][len(parts[0])-40:])
	}
}

func TestSplitLongCodeBlockKeepsPreBalanced(t *testing.T) {
	var code strings.Builder
	for i := 0; code.Len() < 9000; i++ {
		code.WriteString("if a < b && c > d { fmt.Println(\"line\") }\n")
	}
	out := RenderHTML("Here:\n```go\n" + code.String() + "```\nDone.")
	parts := SplitMessage(out, MaxMessageLength)
	if len(parts) < 3 {
		t.Fatalf("%d parts, want at least 3", len(parts))
	}
	whole, err := telegramtest.ParseHTML(out)
	if err != nil {
		t.Fatal(err)
	}
	if got := checkParts(t, parts, MaxMessageLength); got != whole {
		t.Errorf("parts' visible text differs from the whole's")
	}
	for i, p := range parts[1:] {
		if !strings.HasPrefix(p, `<pre><code class="language-go">`) {
			t.Errorf("part %d does not reopen the code block: %q", i+1, p[:40])
		}
	}
	for i, p := range parts[:len(parts)-1] {
		if !strings.HasSuffix(p, "\n</code></pre>") {
			t.Errorf("part %d does not end at a line inside the block: %q", i, p[len(p)-40:])
		}
	}
}

func TestSplitNeverLosesText(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for i := range 1500 {
		md := randomMarkdown(rng, 1+rng.IntN(300))
		out := RenderHTML(md)
		limit := 120 + rng.IntN(400)
		whole, err := telegramtest.ParseHTML(out)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		got := checkParts(t, SplitMessage(out, limit), limit)
		if got != whole && !(strings.HasPrefix(whole, got) && strings.TrimSpace(whole[len(got):]) == "") {
			t.Fatalf("case %d: SplitMessage(%q, %d) lost text:\nwhole %q\nparts %q", i, out, limit, whole, got)
		}

		plain := SplitPlain(md, limit)
		joined := strings.Join(plain, "")
		if joined != md && !(strings.HasPrefix(md, joined) && strings.TrimSpace(md[len(joined):]) == "") {
			t.Fatalf("case %d: SplitPlain(%q, %d) lost text: %q", i, md, limit, plain)
		}
		for k, p := range plain {
			if UTF16Len(p) > limit || strings.TrimSpace(p) == "" {
				t.Fatalf("case %d: SplitPlain part %d is too long or blank: %q", i, k, p)
			}
		}
	}
}

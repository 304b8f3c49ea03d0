package markup

import (
	"html"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

func TestRenderHTML(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"plain", "hello world", "hello world"},
		{"table", "| name | size |\n|---|--:|\n| **a.txt** | 10 |\n| b & c.go | 2000 |\nafter",
			"<pre>name     | size\n---------+-----\na.txt    |   10\nb &amp; c.go | 2000</pre>\nafter"},
		{"table aligned left, centred and right", "| l | c | r |\n|:--|:-:|--:|\n| a | b | c |\n| long | wide | 12345 |",
			"<pre>l    |  c   |     r\n-----+------+------\na    |  b   |     c\nlong | wide | 12345</pre>"},
		{"table with an escaped pipe and a short row", "|a|b|\n|-|-|\n|x \\| y|\n|z|",
			"<pre>a     | b\n------+--\nx | y\nz</pre>"},
		{"pipes without a delimiter row are text", "| a | b |\n| c | d |", "| a | b |\n| c | d |"},
		{"escaping", `a < b && c > d "q" 'x'`, `a &lt; b &amp;&amp; c &gt; d "q" 'x'`},
		{"html stays text", "<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"},
		{"bold", "**bold** and __also__", "<b>bold</b> and <b>also</b>"},
		{"italic", "*it* and _it_", "<i>it</i> and <i>it</i>"},
		{"strike", "~~gone~~", "<s>gone</s>"},
		{"bold italic", "***both***", "<b><i>both</i></b>"},
		{"nested", "**bold _and italic_ and `code`**", "<b>bold <i>and italic</i> and <code>code</code></b>"},
		{"italic containing bold", "*a **b** c*", "<i>a <b>b</b> c</i>"},
		{"code span escapes and ignores markers", "`a < *b* & c`", "<code>a &lt; *b* &amp; c</code>"},
		{"double backtick code", "`` a`b ``", "<code>a`b</code>"},
		{"snake_case stays", "call my_func_name now", "call my_func_name now"},
		{"unbalanced bold", "**never closed", "**never closed"},
		{"unbalanced italic", "2 * 3 = 6", "2 * 3 = 6"},
		{"unbalanced code", "a `b", "a `b"},
		{"lone tilde", "~5 min", "~5 min"},
		{"mixed unbalanced", "**a*", "*<i>a</i>"},
		{"backslash escape", `\*not italic\*`, "*not italic*"},
		{"backslash kept before a letter", `C:\path`, `C:\path`},
		{"link", "[docs](https://example.com/a?b=1&c=\"2\")", `<a href="https://example.com/a?b=1&amp;c=&quot;2&quot;">docs</a>`},
		{"image", "see ![the chart](https://example.com/c.png) here", `see <a href="https://example.com/c.png">the chart</a> here`},
		{"image without alt text", "![](https://example.com/c.png)", `<a href="https://example.com/c.png">https://example.com/c.png</a>`},
		{"image of a local file", "![chart](chart.png)", `chart (chart.png)`},
		{"exclamation", "wow! [docs](https://example.com)", `wow! <a href="https://example.com">docs</a>`},
		{"link with formatting", "[**bold** link](https://e.com)", `<a href="https://e.com"><b>bold</b> link</a>`},
		{"link with parens in url", "[w](https://e.com/a_(b))", `<a href="https://e.com/a_(b)">w</a>`},
		{"relative link kept as text", "[readme](README.md)", "readme (README.md)"},
		{"javascript link kept as text", "[x](javascript:alert(1))", "x (javascript:alert(1))"},
		{"empty link text shows url", "[](https://e.com)", `<a href="https://e.com">https://e.com</a>`},
		{"autolink", "see <https://e.com/x>", `see <a href="https://e.com/x">https://e.com/x</a>`},
		{"brackets without link", "[not a link] (x)", "[not a link] (x)"},
		{"heading", "# Title\n## Sub *x*", "<b>Title</b>\n<b>Sub <i>x</i></b>"},
		{"hashtag is not a heading", "#tag", "#tag"},
		{"bullets", "- one\n* two\n+ three\n  - nested", "• one\n• two\n• three\n  • nested"},
		{"numbered", "1. first\n2) second\n10. tenth **b**", "1. first\n2) second\n10. tenth <b>b</b>"},
		{"rule stays", "---", "---"},
		{"blockquote", "> quoted **b**\n> more\nafter", "<blockquote>quoted <b>b</b>\nmore</blockquote>\nafter"},
		{"nested quote marker stays literal", "> > inner", "<blockquote>&gt; inner</blockquote>"},
		{"list in blockquote", "> - a\n> - b", "<blockquote>• a\n• b</blockquote>"},
		{"fence with language", "```go\nif a < b && c {\n\t**x**\n}\n```", "<pre><code class=\"language-go\">if a &lt; b &amp;&amp; c {\n\t**x**\n}</code></pre>"},
		{"fence without language", "```\nplain\n```", "<pre>plain</pre>"},
		{"tilde fence", "~~~py\nx\n~~~", `<pre><code class="language-py">x</code></pre>`},
		{"odd info string kept as a line", "```a\"b <c>\nx\n```", "<pre>a\"b &lt;c&gt;\nx</pre>"},
		{"language with symbols", "```c++\nx\n```", `<pre><code class="language-c++">x</code></pre>`},
		{"unclosed fence runs to the end", "text\n```sh\necho *hi*", "text\n<pre><code class=\"language-sh\">echo *hi*</code></pre>"},
		{"indented fence in a list", "1. run:\n   ```\n   make\n   ```\n2. done", "1. run:\n<pre>make</pre>\n2. done"},
		{"paragraph bold across lines", "**a\nb**", "<b>a\nb</b>"},
		{"bold does not cross paragraphs", "**a\n\nb**", "**a\n\nb**"},
		{"blank lines kept", "a\n\n\nb", "a\n\n\nb"},
		{"CRLF", "a\r\n**b**", "a\n<b>b</b>"},
		{"unicode", "**日本語** _naïve_ 😀", "<b>日本語</b> <i>naïve</i> 😀"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := RenderHTML(tt.in)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("RenderHTML(%q) (-want +got):\n%s", tt.in, diff)
			}
			if _, err := telegramtest.ParseHTML(got); err != nil {
				t.Errorf("RenderHTML(%q) = %q is not valid Telegram HTML: %v", tt.in, got, err)
			}
		})
	}
}

// randomMarkdown joins random pieces: words, every marker the renderer
// knows, and characters that need escaping.
func randomMarkdown(rng *rand.Rand, pieces int) string {
	markdownPieces := []string{
		"alpha", "beta", "gamma", "x1", "42", "naïve", "日本", "😀", "snake_case",
		" ", " ", " ", "\n", "\n\n", "\t",
		"*", "**", "***", "_", "__", "~", "~~", "`", "``", "```", "```go\n", "~~~",
		"[", "]", "](", "(", ")", "https://ex.am/ple", "README.md", "<", ">", "&", "\"", "'", "\\",
		"# ", "## ", "- ", "* ", "1. ", "> ", "!", "|", "#",
	}
	var b strings.Builder
	for range pieces {
		b.WriteString(markdownPieces[rng.IntN(len(markdownPieces))])
	}
	return b.String()
}

// wordRunes returns the sorted letters and digits of s.
func wordRunes(s string) []rune {
	var out []rune
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			out = append(out, r)
		}
	}
	slices.Sort(out)
	return out
}

// containsAll reports whether the sorted multiset sub is within the sorted
// multiset super.
func containsAll(super, sub []rune) bool {
	i := 0
	for _, r := range sub {
		for i < len(super) && super[i] < r {
			i++
		}
		if i == len(super) || super[i] != r {
			return false
		}
		i++
	}
	return true
}

func TestRenderHTMLNeverLosesText(t *testing.T) {
	// attrValue matches the attribute values that carry text of the input.
	attrValue := regexp.MustCompile(`(?:href|class)="([^"]*)"`)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 3000 {
		in := randomMarkdown(rng, 1+rng.IntN(40))
		out := RenderHTML(in)
		visible, err := telegramtest.ParseHTML(out)
		if err != nil {
			t.Fatalf("case %d: RenderHTML(%q) = %q is not valid Telegram HTML: %v", i, in, out, err)
		}
		carried := visible
		for _, m := range attrValue.FindAllStringSubmatch(out, -1) {
			carried += " " + strings.TrimPrefix(html.UnescapeString(m[1]), "language-")
		}
		input := wordRunes(in)
		if !containsAll(wordRunes(carried), input) {
			t.Fatalf("case %d: RenderHTML(%q) = %q lost letters or digits", i, in, out)
		}
		if !containsAll(input, wordRunes(visible)) {
			t.Fatalf("case %d: RenderHTML(%q) = %q shows letters or digits the input lacks", i, in, out)
		}
	}
}

func TestRenderHTMLPlainTextRoundTrips(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []rune("ab cdé日😀<>&\"'\n.,;:?/%")
	for i := range 2000 {
		runes := make([]rune, 1+rng.IntN(60))
		for k := range runes {
			runes[k] = alphabet[rng.IntN(len(alphabet))]
		}
		in := string(runes)
		if quoteLine(in) || strings.Contains(in, "\n >") || strings.Contains(in, "\n>") {
			continue // a blockquote is Markdown
		}
		visible, err := telegramtest.ParseHTML(RenderHTML(in))
		if err != nil {
			t.Fatalf("case %d: %q: %v", i, in, err)
		}
		if got, want := normalizeBlankLines(visible), normalizeBlankLines(in); got != want {
			t.Fatalf("case %d: visible text of RenderHTML(%q) = %q", i, in, visible)
		}
	}
}

// normalizeBlankLines empties lines that hold only white space, the one
// change RenderHTML makes to text without Markdown.
func normalizeBlankLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if strings.TrimSpace(l) == "" {
			lines[i] = ""
		}
	}
	return strings.Join(lines, "\n")
}

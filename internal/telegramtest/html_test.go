package telegramtest

import (
	"strings"
	"testing"
)

func TestParseHTML(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		want    string
		wantErr string
	}{
		{name: "plain", in: "hello", want: "hello"},
		{name: "entities", in: "a &lt;b&gt; &amp; &quot;c&quot; &#39;d&#x27; &#128512;", want: `a <b> & "c" 'd' 😀`},
		{name: "bare greater-than", in: "a > b", want: "a > b"},
		{name: "nested tags", in: "<b>bold <i>both</i></b> <u>u</u> <s>s</s> <tg-spoiler>x</tg-spoiler>", want: "bold both u s x"},
		{name: "pre with language", in: `<pre><code class="language-go">x := 1</code></pre>`, want: "x := 1"},
		{name: "link with escaped quote", in: `<a href="https://e.com/?q=&quot;x&quot;&amp;y=1">link</a>`, want: "link"},
		{name: "blockquote expandable", in: "<blockquote expandable>q</blockquote>", want: "q"},
		{name: "spoiler span", in: `<span class="tg-spoiler">s</span>`, want: "s"},
		{name: "upper-case tags", in: "<B>x</B>", want: "x"},
		{name: "unsupported tag", in: "<div>x</div>", wantErr: `unsupported start tag "div"`},
		{name: "span without spoiler class", in: "<span>x</span>", wantErr: "unsupported start tag"},
		{name: "bare less-than", in: "a < b", wantErr: "unclosed start tag"},
		{name: "bare ampersand", in: "AT&T", wantErr: "bare"},
		{name: "unknown named entity", in: "&nbsp;", wantErr: "entity"},
		{name: "unclosed", in: "<b>x", wantErr: `can't find end tag corresponding to start tag "b"`},
		{name: "crossed", in: "<b><i>x</b></i>", wantErr: "unmatched end tag"},
		{name: "stray end tag", in: "x</b>", wantErr: "unexpected end tag"},
		{name: "nested blockquote", in: "<blockquote><blockquote>x</blockquote></blockquote>", wantErr: "nested"},
		{name: "invalid UTF-8", in: "\xff", wantErr: "UTF-8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseHTML(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("ParseHTML(%q) error = %v, want one containing %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseHTML(%q): %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("ParseHTML(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

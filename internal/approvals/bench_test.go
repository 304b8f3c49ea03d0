package approvals

import (
	"strings"
	"testing"

	"mvdan.cc/sh/v3/syntax"
)

// benchCommands are typical bash calls: a short one, a pipeline with a
// nested bash -c, and a 60-line script.
var benchCommands = map[string]string{
	"short":    `cd /srv/app && git status --short && make test 2>&1 | tail -20`,
	"nested":   `find . -name '*.log' -mtime +7 -exec rm -f {} + ; bash -c "curl -fsS https://example.com/health | jq .status"`,
	"script60": strings.Repeat("for f in src/*.go; do gofmt -l \"$f\" >> out.txt; done\nif [ -s out.txt ]; then echo \"$(wc -l < out.txt) files\"; fi\n", 30),
}

// BenchmarkAssessCommand measures the rules' look at one bash command,
// against parsing it alone (BenchmarkParseOnly), in the same run.
func BenchmarkAssessCommand(b *testing.B) {
	for name, cmd := range benchCommands {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				assessCommand(cmd, nil)
			}
		})
	}
}

// BenchmarkParseOnly is the baseline: mvdan.cc/sh parsing the command.
func BenchmarkParseOnly(b *testing.B) {
	for name, cmd := range benchCommands {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				if _, err := syntax.NewParser(syntax.Variant(syntax.LangBash)).Parse(strings.NewReader(cmd), ""); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

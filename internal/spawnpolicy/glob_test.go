package spawnpolicy

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

// referenceMatch is the straightforward matcher the compiled one must agree
// with: a case-insensitive regexp built from the glob, anchored at both
// ends, in which "*" is ".*" and everything else is literal.
func referenceMatch(entry, name string) bool {
	parts := strings.Split(entry, "*")
	for i, part := range parts {
		parts[i] = regexp.QuoteMeta(part)
	}
	re := regexp.MustCompile("(?is)^" + strings.Join(parts, ".*") + "$")
	return re.MatchString(name)
}

func TestPatternMatch(t *testing.T) {
	tests := []struct {
		entry string
		name  string
		want  bool
	}{
		{"GITHUB_TOKEN", "GITHUB_TOKEN", true},
		{"GITHUB_TOKEN", "github_token", true},
		{"github_token", "GitHub_Token", true},
		{"GITHUB_TOKEN", "GITHUB_TOKENS", false},
		{"GITHUB_TOKEN", "XGITHUB_TOKEN", false},
		{"GITHUB_TOKEN", "", false},
		{"*_TOKEN", "GITHUB_TOKEN", true},
		{"*_TOKEN", "_TOKEN", true},
		{"*_TOKEN", "TOKEN", false},
		{"*_TOKEN", "GITHUB_TOKEN_FILE", false},
		{"*_TOKEN", "TOKENIZERS_PARALLELISM", false},
		{"*__*TOKEN", "Telegram__BotToken", true},
		{"*__*TOKEN", "A__TOKEN", true},
		{"*__*TOKEN", "A_TOKEN", false},
		{"*__*TOKEN", "__TOKEN", true},
		{"*__APIKEY", "Telegram__Speech__ApiKey", true},
		{"*_SECRET", "GOOGLE_CLIENT_SECRET", true},
		{"*_SECRET", "SECRET", false},
		{"*", "", true},
		{"*", "ANYTHING", true},
		{"**", "X", true},
		{"A*", "a", true},
		{"A*", "ba", false},
		{"*A", "bA", true},
		{"A*A", "A", false},
		{"A*A", "AA", true},
		{"A*B*C", "aXbYc", true},
		{"A*B*C", "aXcYb", false},
		{"*AB*AB*", "ABAB", true},
		{"*AB*AB*", "ABA", false},
		{"NPM_*", "npm_config_cache", true},
		{"*_PASSWORD", "Registry_Password", true},
		{"STRASSE", "straße", false},
		{"K*", "\u212aELVIN", true}, // KELVIN SIGN folds to k
		{"*\u017f", "ABS", true},    // LATIN SMALL LETTER LONG S folds to s
		{"Ä_KEY", "ä_key", true},
		{"*_KEY", "\xff_KEY", true},
		{"\xff*", "\xff", true}, // never valid as an entry; identical bytes match
	}
	for _, tt := range tests {
		t.Run(tt.entry+"~"+tt.name, func(t *testing.T) {
			p := compilePattern(tt.entry)
			if got := p.match(tt.name); got != tt.want {
				t.Errorf("%q matches %q = %v, want %v", tt.entry, tt.name, got, tt.want)
			}
			if utf8.ValidString(tt.entry) {
				if ref := referenceMatch(tt.entry, tt.name); ref != tt.want {
					t.Errorf("the reference says %v for %q and %q: the table is wrong", ref, tt.entry, tt.name)
				}
			}
		})
	}
}

// FuzzPatternMatch checks the compiled matcher against referenceMatch. Its
// seed corpus is in testdata/fuzz/FuzzPatternMatch.
func FuzzPatternMatch(f *testing.F) {
	for _, entry := range DefaultDeny {
		f.Add(entry, "GITHUB_TOKEN")
	}
	f.Add("*__*SECRET", "GoogleCalendar__ClientSecret")
	f.Add("A*B*C", "aXbYc")
	f.Add("K*", "\u212aELVIN")
	f.Fuzz(func(t *testing.T, entry, name string) {
		if entry == "" || !utf8.ValidString(entry) {
			t.Skip("entries are validated: never empty, always UTF-8")
		}
		// Both matchers take time in the product of the lengths; real
		// entries and names are short, and long ones only slow the search.
		if len(entry) > 64 || len(name) > 256 {
			t.Skip("longer than any real entry or name")
		}
		p := compilePattern(entry)
		got, want := p.match(name), referenceMatch(entry, name)
		if got != want {
			t.Errorf("%q matches %q = %v, the reference says %v", entry, name, got, want)
		}
	})
}

package credproxy_test

import (
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/credproxy"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// class is a byte's kind, as a stand-in keeps it.
func class(c byte) byte {
	switch {
	case c >= 'a' && c <= 'z':
		return 'a'
	case c >= 'A' && c <= 'Z':
		return 'A'
	case c >= '0' && c <= '9':
		return '0'
	}
	return c
}

func TestStandInShape(t *testing.T) {
	tests := []struct {
		name, real, prefix string
	}{
		{"classic GitHub", "ghp_" + "aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5", "ghp_"},
		{"fine-grained GitHub", "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ab", "github_pat_"},
		{"npm", realNPM, "npm_"},
		{"Hugging Face", "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789", "hf_"},
		{"GitLab", "glpat-AbCdEfGhIj0123456789", "glpat-"},
		{"another service's prefix", "dop_v1_0123456789abcdef0123456789abcdef", "dop_"},
		{"JWT-like", "eyJhbGciOi.eyJzdWIiOiIx.SflKxwRJSMeKKF2QT4f", ""},
	}
	red := redactor.New([]string{realGH})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := credproxy.TokenPrefix(tt.real); got != tt.prefix {
				t.Errorf("prefix %q, want %q", got, tt.prefix)
			}
			known := redactor.New([]string{tt.real})
			seen := map[string]bool{}
			for range 20 {
				s, err := credproxy.NewStandIn(tt.real, nil, func(v string) bool { return known.Redact(v) != v || red.Redact(v) != v })
				if err != nil {
					t.Fatal(err)
				}
				if s == tt.real || seen[s] {
					t.Fatal("a stand-in repeats the real value or an earlier stand-in")
				}
				seen[s] = true
				if len(s) != len(tt.real) || !strings.HasPrefix(s, tt.prefix) {
					t.Fatalf("stand-in of %d bytes with prefix %q, want %d bytes with %q", len(s), credproxy.TokenPrefix(s), len(tt.real), tt.prefix)
				}
				for i := range len(s) {
					if class(s[i]) != class(tt.real[i]) {
						t.Fatalf("byte %d is of another kind than the real value's", i)
					}
					if s[i] <= ' ' || s[i] >= 0x7f {
						t.Fatalf("byte %d is not printable", i)
					}
				}
				if known.Redact(s) != s {
					t.Fatal("the redactor knows the stand-in: the agent would see it redacted")
				}
				if known.Redact(tt.real) == tt.real {
					t.Fatal("the real value is no longer a known secret")
				}
			}
		})
	}
}

func TestStandInHexStaysHex(t *testing.T) {
	real := "0123456789abcdef0123456789abcdef01234567"
	s, err := credproxy.NewStandIn(real, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Trim(s, "0123456789abcdef") != "" || len(s) != len(real) {
		t.Error("the stand-in of a hex token is not hex of its length")
	}
}

func TestStandInNotPrintableBecomesPrintable(t *testing.T) {
	real := "tok\x01\x02\xffabcdefgh\n"
	s, err := credproxy.NewStandIn(real, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	for i := range len(s) {
		if s[i] <= ' ' || s[i] >= 0x7f {
			t.Fatalf("byte %d of the stand-in is not printable", i)
		}
	}
}

func TestStandInThatCannotBeDrawn(t *testing.T) {
	_, err := credproxy.NewStandIn("--------", nil, nil)
	if err == nil {
		t.Fatal("a value of symbols only got a stand-in equal to it")
	}
}

func TestShape(t *testing.T) {
	if got, want := credproxy.Shape("ghp_aB3dE5fG7hI9jK1lM3nO5pQ7rS9tU1vW3xY5"), "ghp_… 40 characters: letters, digits"; got != want {
		t.Errorf("Shape = %q, want %q", got, want)
	}
}

package redactor

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"net/url"
	"strings"
	"testing"
	"unsafe"

	"github.com/volcanic/telegram-agent/internal/scaletest"
)

func TestRedactPartialTrickle(t *testing.T) {
	const secret = "sk-partial/SECRET+0123456789 \"abcdef\""
	r := New([]string{secret, "another-secret-value-42"})
	quoted, err := json.Marshal(secret)
	if err != nil {
		t.Fatal(err)
	}
	forms := map[string]string{
		"raw":       secret,
		"hex":       hex.EncodeToString([]byte(secret)),
		"HEX":       strings.ToUpper(hex.EncodeToString([]byte(secret))),
		"base64":    base64.StdEncoding.EncodeToString([]byte(secret)),
		"base64url": base64.RawURLEncoding.EncodeToString([]byte(secret)),
		"query":     url.QueryEscape(secret),
		"path":      url.PathEscape(secret),
		"json":      string(quoted),
	}
	for name, form := range forms {
		t.Run(name, func(t *testing.T) {
			const before = "progress: "
			for k := 1; k <= len(form); k++ {
				snapshot := before + form[:k]
				got := r.RedactPartial(snapshot)
				// Whatever is shown after the fixed text must not be a
				// growing piece of the form.
				shown := strings.TrimPrefix(got, before)
				if shown != "" && shown != Token && strings.HasPrefix(form, shown) && len(shown) >= 4 {
					t.Fatalf("prefix %d of the %s form: %d bytes of it are shown", k, name, len(shown))
				}
			}
			if got := r.RedactPartial(before + form + "\n"); !strings.Contains(got, Token) {
				t.Errorf("a complete %s form: got %d bytes without %s", name, len(got), Token)
			}
		})
	}
}

func TestRedactPartialCases(t *testing.T) {
	const a = "first-secret-AAAA1111"
	const b = "second-secret-BBBB2222"
	r := New([]string{a, b})
	tests := []struct {
		name, in, want string
	}{
		// Every fragment's base64 and base32 forms, at every alignment,
		// are encoded patterns, so a trailing word may begin one: the
		// texts end in a byte that begins none.
		{"no pattern", "plain output.\n", "plain output.\n"},
		{"empty", "", ""},
		{"complete then text", "x " + a + " y.\n", "x " + Token + " y.\n"},
		{"trailing prefix held back", "x " + a[:10], "x "},
		{"complete then the start of another", "x " + a + b[:5], "x " + Token},
		{"complete at the end", "x " + a, "x " + Token},
		{"two complete, one partial", a + " " + b + " " + a[:3], Token + " " + Token + " "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.RedactPartial(tt.in); got != tt.want {
				t.Errorf("RedactPartial = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestRedactPartialNoMatchDoesNotAllocate(t *testing.T) {
	r := New([]string{"sk-partial-SECRET-0123456789abcdef"})
	in := strings.Repeat("ordinary log line with nothing secret in it.\n", 100)
	if got := r.RedactPartial(in); unsafe.StringData(got) != unsafe.StringData(in) || len(got) != len(in) {
		t.Fatal("RedactPartial copied an input with nothing to hide")
	}
	if n := testing.AllocsPerRun(100, func() { r.RedactPartial(in) }); n != 0 {
		t.Errorf("RedactPartial allocates %.0f times on no match, want 0", n)
	}
	var nilR *Redactor
	if got := nilR.RedactPartial(in); got != in {
		t.Error("a nil Redactor changed its input")
	}
}

// TestRedactPartialStreamProperty checks, for random streams holding
// secrets, that no snapshot shows 4 or more bytes of a secret's beginning
// at its end, and that every snapshot is a beginning of Redact's output of
// the same text. (A line end does not end every match: an encoded form
// wraps across lines, so a snapshot at a line end may hold back its last
// line.)
func TestRedactPartialStreamProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	secrets := []string{"Zq9-secret-one-0000", "Zq9-secret-two-1111", "xyzzy-third-secret"}
	r := New(secrets)
	alphabet := "abc xyz-019Zq\n"
	// The seed stays; reduced (scaletest), the first eighth of its texts run.
	for iter := range scaletest.N(300) {
		var sb strings.Builder
		for sb.Len() < 200 {
			if rng.IntN(4) == 0 {
				sb.WriteString(secrets[rng.IntN(len(secrets))])
			} else {
				sb.WriteByte(alphabet[rng.IntN(len(alphabet))])
			}
		}
		stream := sb.String()
		for i := 0; i <= len(stream); i++ {
			got := r.RedactPartial(stream[:i])
			if full := r.Redact(stream[:i]); !strings.HasPrefix(full, got) {
				t.Fatalf("stream %d at %d: a snapshot is not a beginning of Redact's output", iter, i)
			}
			for _, s := range secrets {
				for k := len(s) - 1; k >= 4; k-- {
					if strings.HasSuffix(got, s[:k]) {
						t.Fatalf("stream %d at %d: the snapshot ends with %d bytes of a secret", iter, i, k)
					}
				}
			}
		}
	}
}

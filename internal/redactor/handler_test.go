package redactor

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

type stringer struct{ v string }

func (s stringer) String() string { return "stringer(" + s.v + ")" }

type valuer struct{ v string }

func (v valuer) LogValue() slog.Value { return slog.StringValue(v.v) }

type plain struct {
	Name  string
	Inner []string
}

func TestHandler(t *testing.T) {
	r := New([]string{secretB})
	url := "https://api.telegram.org/bot" + secretB + "/getUpdates"
	tests := []struct {
		name string
		log  func(*slog.Logger)
	}{
		{"message", func(l *slog.Logger) { l.Info("request to " + url) }},
		{"string attr", func(l *slog.Logger) { l.Info("msg", "url", url) }},
		{"error attr", func(l *slog.Logger) { l.Error("failed", "err", fmt.Errorf("post %s: %w", url, errors.New("timeout"))) }},
		{"stringer attr", func(l *slog.Logger) { l.Info("msg", "s", stringer{secretB}) }},
		{"bytes attr", func(l *slog.Logger) { l.Info("msg", "b", []byte("body "+secretB)) }},
		{"struct attr", func(l *slog.Logger) { l.Info("msg", "p", plain{Name: "n", Inner: []string{secretB}}) }},
		{"log valuer", func(l *slog.Logger) { l.Info("msg", "v", valuer{secretB}) }},
		{"nested group", func(l *slog.Logger) {
			l.Info("msg", slog.Group("outer", slog.Group("inner", slog.String("tok", secretB), slog.Any("err", errors.New(url)))))
		}},
		{"WithAttrs", func(l *slog.Logger) { l.With("tok", secretB, slog.Group("g", "u", url)).Info("msg") }},
		{"WithGroup then attrs", func(l *slog.Logger) { l.WithGroup("req").With("u", url).Info("msg", "tok", secretB) }},
		{"secret as key", func(l *slog.Logger) { l.Info("msg", secretB, 1) }},
	}
	for _, format := range []string{"text", "json"} {
		for _, tt := range tests {
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				var buf bytes.Buffer
				var base slog.Handler = slog.NewTextHandler(&buf, nil)
				if format == "json" {
					base = slog.NewJSONHandler(&buf, nil)
				}
				tt.log(slog.New(r.Handler(base)))
				out := buf.String()
				if how := leak(out, secretB); how != "" {
					t.Errorf("secret survives in the log line as %s", how)
				}
				if !strings.Contains(out, Token) {
					t.Errorf("no %s in the log line", Token)
				}
			})
		}
	}
}

func TestHandlerKeepsOtherValues(t *testing.T) {
	r := New([]string{secretB})
	var buf bytes.Buffer
	l := slog.New(r.Handler(slog.NewJSONHandler(&buf, nil)))
	l.Info("plain", "n", 42, "ok", true, "s", "hello", "m", map[string]int{"a": 1}, "nil", nil)
	want := `"msg":"plain","n":42,"ok":true,"s":"hello","m":{"a":1},"nil":null}`
	if got := buf.String(); !strings.HasSuffix(strings.TrimSpace(got), want) {
		t.Errorf("unrelated values changed:\n%s", cmp.Diff(want, got))
	}
}

func TestHandlerEnabledAndEmpty(t *testing.T) {
	var buf bytes.Buffer
	base := slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelWarn})
	h := New(nil).Handler(base)
	if h.Enabled(context.Background(), slog.LevelInfo) {
		t.Error("Info enabled, want the wrapped handler's answer (disabled)")
	}
	slog.New(h).Warn("passes through", "k", "v")
	if !strings.Contains(buf.String(), "passes through") || !strings.Contains(buf.String(), "k=v") {
		t.Errorf("empty redactor changed the record: %s", buf.String())
	}
}

// blob is a value whose fields print a secret as numbers: %+v writes a
// byte slice (a json.RawMessage too) as a decimal list, a form the
// redactor does not know, while its JSON (base64, or the raw JSON itself)
// holds a form it does.
type blob struct {
	Name string
	Data []byte
	Args json.RawMessage
}

// hiddenBlob holds its bytes in an unexported field, which JSON leaves out.
type hiddenBlob struct {
	Name string
	data []byte
}

// funcBlob has a func field, which JSON refuses to marshal.
type funcBlob struct {
	Data []byte
	F    func()
}

// TestHandlerValueWithNumericBytes logs values whose %+v shows a secret
// only as decimal numbers: the record must hold neither that list nor any
// form of the secret, and must say that something was redacted.
func TestHandlerValueWithNumericBytes(t *testing.T) {
	r := New([]string{secretB})
	numbers := func(v any) string { return strings.Trim(fmt.Sprint(v), "[]") }
	args := json.RawMessage(`{"token":"` + secretB + `"}`)
	tests := []struct {
		name  string
		value any
		shown string // the secret's numeric rendering that must not appear
	}{
		{"byte slice field", blob{Name: "n", Data: []byte(secretB)}, numbers([]byte(secretB))},
		{"raw JSON field", blob{Name: "n", Args: args}, numbers([]byte(args))},
		{"map of byte slices", map[string][]byte{"k": []byte(secretB)}, numbers([]byte(secretB))},
		// JSON shows neither an unexported field nor any field of a value
		// it cannot marshal: %+v alone holds the numbers.
		{"unexported byte slice field", hiddenBlob{Name: "n", data: []byte("id " + secretB)}, numbers([]byte(secretB))},
		{"byte slice beside a func field", funcBlob{Data: []byte(secretB), F: func() {}}, numbers([]byte(secretB))},
		{"byte array", [len(secretB)]byte([]byte(secretB)), numbers([]byte(secretB))},
	}
	for _, format := range []string{"text", "json"} {
		for _, tt := range tests {
			t.Run(format+"/"+tt.name, func(t *testing.T) {
				var buf bytes.Buffer
				var base slog.Handler = slog.NewTextHandler(&buf, nil)
				if format == "json" {
					base = slog.NewJSONHandler(&buf, nil)
				}
				slog.New(r.Handler(base)).Info("msg", "v", tt.value)
				out := buf.String()
				if strings.Contains(out, tt.shown) {
					t.Errorf("the secret's bytes survive in the log line as decimal numbers (%d bytes of it)", len(secretB))
				}
				if how := leak(out, secretB); how != "" {
					t.Errorf("secret survives in the log line as %s", how)
				}
				if !strings.Contains(out, Token) {
					t.Errorf("no %s in the log line", Token)
				}
			})
		}
	}
}

// TestRedactByteLists checks which bracketed lists count as a byte slice's
// %v: only numbers up to 255, single-spaced, at least two, closed.
func TestRedactByteLists(t *testing.T) {
	r := New([]string{secretB})
	list := strings.Trim(fmt.Sprint([]byte(secretB)), "[]")
	tests := []struct {
		name, text, want string
	}{
		{"a byte slice", "{a:[" + list + "] b:1}", "{a:" + Token + " b:1}"},
		{"two in one text", "[" + list + "] [1 2] [" + list + "]", Token + " [1 2] " + Token},
		{"a number over 255", "[" + list + " 256]", "[" + list + " 256]"},
		{"unclosed", "[" + list, "[" + list},
		{"nested", "[[" + list + "]]", "[" + Token + "]"},
		{"no secret", "[1 2 3] [x]", "[1 2 3] [x]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.redactByteLists(tt.text); got != tt.want {
				t.Errorf("redactByteLists: %d bytes, want %d (leaves a secret: %v)", len(got), len(tt.want), strings.Contains(got, list))
			}
		})
	}
}

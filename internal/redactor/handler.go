package redactor

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
)

// Handler returns a slog.Handler that redacts every record before h sees
// it: the message, every attribute key and string value (in groups too, and
// in attributes added through WithAttrs), and values of kind Any that render
// to text. Errors, fmt.Stringers and []byte become their redacted text; any
// other Any value whose fmt (%+v) rendering holds a secret becomes its
// redacted %+v text (a byte slice in it, which %+v prints as a list of
// decimal numbers, replaced whole by Token when its bytes hold one), one
// whose JSON rendering alone holds one its redacted JSON text, and any
// other is passed through unchanged.
func (r *Redactor) Handler(h slog.Handler) slog.Handler {
	return &handler{r: r, next: h}
}

type handler struct {
	r    *Redactor
	next slog.Handler
}

func (h *handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.next.Enabled(ctx, level)
}

func (h *handler) Handle(ctx context.Context, rec slog.Record) error {
	if h.r == nil || h.r.empty() {
		return h.next.Handle(ctx, rec)
	}
	out := slog.NewRecord(rec.Time, rec.Level, h.r.Redact(rec.Message), rec.PC)
	rec.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.r.redactAttr(a))
		return true
	})
	return h.next.Handle(ctx, out)
}

func (h *handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	redacted := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		redacted[i] = h.r.redactAttr(a)
	}
	return &handler{r: h.r, next: h.next.WithAttrs(redacted)}
}

func (h *handler) WithGroup(name string) slog.Handler {
	return &handler{r: h.r, next: h.next.WithGroup(h.r.Redact(name))}
}

// redactAttr returns a with its key and value redacted.
func (r *Redactor) redactAttr(a slog.Attr) slog.Attr {
	return slog.Attr{Key: r.Redact(a.Key), Value: r.redactValue(a.Value)}
}

// redactValue returns v with every secret removed from its text.
func (r *Redactor) redactValue(v slog.Value) slog.Value {
	v = v.Resolve()
	switch v.Kind() {
	case slog.KindString:
		s := v.String()
		if red := r.Redact(s); red != s {
			return slog.StringValue(red)
		}
		return v
	case slog.KindGroup:
		group := v.Group()
		attrs := make([]slog.Attr, len(group))
		for i, a := range group {
			attrs[i] = r.redactAttr(a)
		}
		return slog.GroupValue(attrs...)
	case slog.KindAny:
		return r.redactAny(v)
	default:
		return v
	}
}

// redactAny handles a value of kind Any.
func (r *Redactor) redactAny(v slog.Value) slog.Value {
	switch x := v.Any().(type) {
	case nil:
		return v
	case error:
		return slog.StringValue(r.Redact(x.Error()))
	case fmt.Stringer:
		return slog.StringValue(r.Redact(x.String()))
	case []byte:
		return slog.StringValue(r.Redact(string(x)))
	default:
		text := fmt.Sprintf("%+v", x)
		// The byte lists go first: a match of Redact inside one would
		// leave the rest of its numbers unrecognised.
		red := r.Redact(r.redactByteLists(text))
		if red != text {
			return slog.StringValue(red)
		}
		// The JSON rendering shows what %+v may hide from the redactor: a
		// byte slice (a json.RawMessage) is a list of decimal numbers in
		// %+v, base64 or the raw JSON here. When only the JSON holds a
		// secret, the %+v text would carry it as numbers: the redacted
		// JSON goes instead.
		if b, err := json.Marshal(x); err == nil {
			if s := string(b); r.Redact(s) != s {
				return slog.StringValue(r.Redact(s))
			}
		}
		return v
	}
}

// redactByteLists returns text with every list of decimal numbers between
// brackets, the way %v prints a byte slice or array, whose bytes hold a
// secret replaced by Token. JSON shows an exported []byte field as base64,
// but neither an unexported one nor any field of a value JSON cannot
// marshal (one with a func or a channel field): %+v alone prints those.
func (r *Redactor) redactByteLists(text string) string {
	var b strings.Builder
	done := 0
	for i := 0; i < len(text); i++ {
		if text[i] != '[' {
			continue
		}
		end, bytes, ok := byteList(text[i+1:])
		if !ok {
			continue
		}
		if s := string(bytes); r.Redact(s) != s {
			b.WriteString(text[done:i])
			b.WriteString(Token)
			done = i + 1 + end
		}
		i += end
	}
	if done == 0 {
		return text
	}
	b.WriteString(text[done:])
	return b.String()
}

// byteList parses s, which follows a '[', as numbers from 0 to 255
// separated by single spaces and closed by ']': it returns the length up to
// and including the ']', the bytes, and whether s starts so with at least
// two numbers.
func byteList(s string) (int, []byte, bool) {
	var out []byte
	n, digits := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9' && digits < 3:
			n, digits = n*10+int(c-'0'), digits+1
		case (c == ' ' || c == ']') && digits > 0 && n <= 255:
			out = append(out, byte(n))
			n, digits = 0, 0
			if c == ']' {
				return i + 1, out, len(out) >= 2
			}
		default:
			return 0, nil, false
		}
	}
	return 0, nil, false
}

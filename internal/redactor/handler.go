package redactor

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
)

// Handler returns a slog.Handler that redacts every record before h sees
// it: the message, every attribute key and string value (in groups too, and
// in attributes added through WithAttrs), and values of kind Any that render
// to text. Errors, fmt.Stringers and []byte become their redacted text; any
// other Any value whose fmt (%+v) rendering holds a secret becomes its
// redacted %+v text, one whose JSON rendering alone holds one (a byte slice
// field, which %+v prints as numbers) its redacted JSON text, and any other
// is passed through unchanged.
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
		red := r.Redact(text)
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

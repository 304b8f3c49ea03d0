// Package logtest is the tests' recording slog.Handler: it keeps every
// record, so that a test can assert on what was logged (and that no secret
// was), or wait for a line logged by another goroutine.
package logtest

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Record is one record a [Recorder] kept.
type Record struct {
	Level   slog.Level
	Message string
	// Attrs holds every attribute as text, the logger's own included, by
	// key; the attributes of a group are keyed "group.key".
	Attrs map[string]string
	// text is the record as one line: level, message, then key=value for
	// every attribute in order.
	text string
}

// String returns the record as one line: "LEVEL message key=value ...".
func (r Record) String() string { return r.text }

// Recorder is a slog.Handler that keeps every record at every level. The
// handlers its WithAttrs and WithGroup return share its records. It is safe
// for concurrent use.
type Recorder struct {
	s      *store
	attrs  []attr
	prefix string // the open groups, each followed by "."
}

// attr is one attribute, flattened to text.
type attr struct{ key, value string }

// store is what a Recorder and the handlers derived from it share.
type store struct {
	mu      sync.Mutex
	records []Record
	// changed is closed, and replaced, whenever a record is added.
	changed chan struct{}
}

// New returns an empty Recorder.
func New() *Recorder {
	return &Recorder{s: &store{changed: make(chan struct{})}}
}

// Logger returns a logger that writes to r.
func (r *Recorder) Logger() *slog.Logger { return slog.New(r) }

// Enabled reports true: every level is kept.
func (r *Recorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle keeps rec with r's attributes.
func (r *Recorder) Handle(_ context.Context, rec slog.Record) error {
	attrs := slices.Clone(r.attrs)
	rec.Attrs(func(a slog.Attr) bool {
		attrs = flatten(attrs, r.prefix, a)
		return true
	})
	out := Record{Level: rec.Level, Message: rec.Message, Attrs: make(map[string]string, len(attrs))}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s", rec.Level, rec.Message)
	for _, a := range attrs {
		out.Attrs[a.key] = a.value
		fmt.Fprintf(&b, " %s=%s", a.key, a.value)
	}
	out.text = b.String()
	s := r.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = append(s.records, out)
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}

// flatten appends a to attrs, resolved and as text, with its group's
// attributes under their own keys.
func flatten(attrs []attr, prefix string, a slog.Attr) []attr {
	v := a.Value.Resolve()
	if v.Kind() == slog.KindGroup {
		if a.Key != "" {
			prefix += a.Key + "."
		}
		for _, g := range v.Group() {
			attrs = flatten(attrs, prefix, g)
		}
		return attrs
	}
	if a.Equal(slog.Attr{}) {
		return attrs
	}
	return append(attrs, attr{key: prefix + a.Key, value: v.String()})
}

// WithAttrs returns a handler that adds attrs to every record.
func (r *Recorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := *r
	out.attrs = slices.Clip(r.attrs)
	for _, a := range attrs {
		out.attrs = flatten(out.attrs, r.prefix, a)
	}
	return &out
}

// WithGroup returns a handler that keys later attributes "name.key".
func (r *Recorder) WithGroup(name string) slog.Handler {
	if name == "" {
		return r
	}
	out := *r
	out.prefix += name + "."
	return &out
}

// Records returns the records kept so far, in order.
func (r *Recorder) Records() []Record {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	return slices.Clone(r.s.records)
}

// Find returns the records kept so far that match.
func (r *Recorder) Find(match func(Record) bool) []Record {
	var out []Record
	for _, rec := range r.Records() {
		if match(rec) {
			out = append(out, rec)
		}
	}
	return out
}

// Lines returns every record kept so far as one line each (see
// [Record.String]).
func (r *Recorder) Lines() []string {
	recs := r.Records()
	out := make([]string, len(recs))
	for i, rec := range recs {
		out[i] = rec.text
	}
	return out
}

// Text returns [Recorder.Lines] joined by newlines.
func (r *Recorder) Text() string { return strings.Join(r.Lines(), "\n") }

// Wait blocks until a record that matches is kept and returns it. It fails
// the test after 15 seconds, a guard against a hang, not a timing
// assertion; what describes the record for that failure, which names the
// levels and messages logged, never their attributes.
func (r *Recorder) Wait(t testing.TB, what string, match func(Record) bool) Record {
	t.Helper()
	guard := time.NewTimer(15 * time.Second)
	defer guard.Stop()
	for {
		r.s.mu.Lock()
		recs, changed := slices.Clone(r.s.records), r.s.changed
		r.s.mu.Unlock()
		for _, rec := range recs {
			if match(rec) {
				return rec
			}
		}
		select {
		case <-changed:
		case <-guard.C:
			msgs := make([]string, len(recs))
			for i, rec := range recs {
				msgs[i] = rec.Level.String() + " " + rec.Message
			}
			t.Fatalf("no log line %s; logged: %s", what, strings.Join(msgs, "; "))
		}
	}
}

// Is matches the records at level whose message contains msg.
func Is(level slog.Level, msg string) func(Record) bool {
	return func(r Record) bool { return r.Level == level && strings.Contains(r.Message, msg) }
}

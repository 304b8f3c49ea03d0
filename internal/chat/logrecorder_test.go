package chat

import (
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// logRecord is one line a logRecorder kept: its level, its message and its
// attributes as text.
type logRecord struct {
	Level   slog.Level
	Message string
	Attrs   map[string]string
}

// logRecorder is a slog.Handler that keeps every record, so that a test can
// wait for a log line and assert on its level, message and attributes.
type logRecorder struct {
	store *logStore
	attrs []slog.Attr
}

// logStore is what a logRecorder and the handlers derived from it share.
type logStore struct {
	mu      sync.Mutex
	records []logRecord
	// changed is closed (and replaced) whenever a record is added.
	changed chan struct{}
}

func newLogRecorder() *logRecorder {
	return &logRecorder{store: &logStore{changed: make(chan struct{})}}
}

// logger returns a logger that writes to r.
func (r *logRecorder) logger() *slog.Logger { return slog.New(r) }

// Enabled records every level.
func (r *logRecorder) Enabled(context.Context, slog.Level) bool { return true }

// Handle keeps rec with r's attributes.
func (r *logRecorder) Handle(_ context.Context, rec slog.Record) error {
	attrs := make(map[string]string, len(r.attrs)+rec.NumAttrs())
	for _, a := range r.attrs {
		attrs[a.Key] = a.Value.String()
	}
	rec.Attrs(func(a slog.Attr) bool {
		attrs[a.Key] = a.Value.String()
		return true
	})
	s := r.store
	s.mu.Lock()
	defer s.mu.Unlock()
	s.records = append(s.records, logRecord{Level: rec.Level, Message: rec.Message, Attrs: attrs})
	close(s.changed)
	s.changed = make(chan struct{})
	return nil
}

// WithAttrs returns a handler that adds attrs to every record.
func (r *logRecorder) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &logRecorder{store: r.store, attrs: append(slices.Clip(r.attrs), attrs...)}
}

// WithGroup returns r: the host logs no groups.
func (r *logRecorder) WithGroup(string) slog.Handler { return r }

// records returns the records kept so far.
func (r *logRecorder) records() []logRecord {
	r.store.mu.Lock()
	defer r.store.mu.Unlock()
	return slices.Clone(r.store.records)
}

// find returns the records that match.
func (r *logRecorder) find(match func(logRecord) bool) []logRecord {
	var out []logRecord
	for _, rec := range r.records() {
		if match(rec) {
			out = append(out, rec)
		}
	}
	return out
}

// wait blocks until a record that matches is kept and returns it; it fails
// the test after 15 s (a hang guard). what describes the record; the
// failure names the messages logged, never their attributes.
func (r *logRecorder) wait(t *testing.T, what string, match func(logRecord) bool) logRecord {
	t.Helper()
	guard := time.NewTimer(15 * time.Second)
	defer guard.Stop()
	for {
		r.store.mu.Lock()
		recs, changed := slices.Clone(r.store.records), r.store.changed
		r.store.mu.Unlock()
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

// isLog matches the records at level whose message contains msg.
func isLog(level slog.Level, msg string) func(logRecord) bool {
	return func(r logRecord) bool { return r.Level == level && strings.Contains(r.Message, msg) }
}

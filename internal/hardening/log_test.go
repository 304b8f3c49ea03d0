package hardening

import (
	"context"
	"log/slog"
	"sync"
)

// entry is what the tests compare of a log record.
type entry struct {
	Level slog.Level
	Msg   string
	Errno int64
}

// recorder is a slog.Handler that keeps every record it handles.
type recorder struct {
	mu      sync.Mutex
	entries []entry
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }

func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	e := entry{Level: rec.Level, Msg: rec.Message}
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "errno" {
			e.Errno = a.Value.Int64()
		}
		return true
	})
	r.mu.Lock()
	defer r.mu.Unlock()
	r.entries = append(r.entries, e)
	return nil
}

func (r *recorder) WithAttrs([]slog.Attr) slog.Handler { return r }

func (r *recorder) WithGroup(string) slog.Handler { return r }

// logged returns a copy of the entries recorded so far.
func (r *recorder) logged() []entry {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]entry(nil), r.entries...)
}

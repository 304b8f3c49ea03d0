package chat

import (
	"log/slog"
	"testing"

	"github.com/volcanic/telegram-agent/internal/logtest"
)

// logRecord is one record a logRecorder kept.
type logRecord = logtest.Record

// logRecorder is the tests' recording slog.Handler, under the lower-case
// names the chat tests use.
type logRecorder struct{ *logtest.Recorder }

func newLogRecorder() *logRecorder { return &logRecorder{logtest.New()} }

// logger returns a logger that writes to r.
func (r *logRecorder) logger() *slog.Logger { return r.Logger() }

// records returns the records kept so far.
func (r *logRecorder) records() []logRecord { return r.Records() }

// find returns the records that match.
func (r *logRecorder) find(match func(logRecord) bool) []logRecord { return r.Find(match) }

// wait blocks until a record that matches is kept (see logtest.Recorder.Wait).
func (r *logRecorder) wait(t *testing.T, what string, match func(logRecord) bool) logRecord {
	t.Helper()
	return r.Wait(t, what, match)
}

// isLog matches the records at level whose message contains msg.
func isLog(level slog.Level, msg string) func(logRecord) bool { return logtest.Is(level, msg) }

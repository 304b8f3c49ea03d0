package hardening

import (
	"log/slog"
	"strconv"

	"github.com/volcanic/telegram-agent/internal/logtest"
)

// entry is what the tests compare of a log record.
type entry struct {
	Level slog.Level
	Msg   string
	Errno int64
}

// logged returns what rec kept so far, as entries.
func logged(rec *logtest.Recorder) []entry {
	var out []entry
	for _, r := range rec.Records() {
		e := entry{Level: r.Level, Msg: r.Message}
		if v, ok := r.Attrs["errno"]; ok {
			e.Errno, _ = strconv.ParseInt(v, 10, 64)
		}
		out = append(out, e)
	}
	return out
}

package scheduler

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/logtest"
)

// logLine is what the test compares of a record.
type logLine struct {
	Level   slog.Level
	Message string
	Attrs   map[string]string
}

// A job's firing and its outcome are logged at Info (Warn for a failed
// watcher) with the job's id, name, target and kind; no line at Info or
// above shows its prompt or its script's output.
func TestFiringIsLogged(t *testing.T) {
	tests := []struct {
		name, prompt, script string
		want                 []logLine
	}{
		{"prompt", "water the ficus-prompt-text", "", []logLine{
			{slog.LevelInfo, "scheduler: job fired", map[string]string{"kind": "prompt", "late": "false"}},
			{slog.LevelInfo, "scheduler: job ran", map[string]string{"kind": "prompt", "outcome": "prompted the chat"}},
		}},
		{"watcher", "report", "echo watcher-output-text", []logLine{
			{slog.LevelInfo, "scheduler: job fired", map[string]string{"kind": "watcher", "late": "false"}},
			{slog.LevelInfo, "scheduler: job ran", map[string]string{"kind": "watcher", "outcome": "output sent to the chat", "output_bytes": "20", "cut": "false"}},
		}},
		{"failing watcher", "report", "echo watcher-output-text; exit 3", []logLine{
			{slog.LevelInfo, "scheduler: job fired", map[string]string{"kind": "watcher", "late": "false"}},
			{slog.LevelWarn, "scheduler: job ran", map[string]string{"kind": "watcher", "outcome": "failed: exit status 3", "output_bytes": "20", "cut": "false"}},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := logtest.New()
			e := newEnv(t, setup{opts: []Option{WithLogger(rec.Logger())}})
			j, err := e.s.Schedule("chat-a", "@hourly", tt.prompt, tt.script, "tea")
			if err != nil {
				t.Fatal(err)
			}
			e.runNow(t, j.ID)
			var got []logLine
			for _, r := range rec.Records() {
				l := logLine{Level: r.Level, Message: r.Message, Attrs: r.Attrs}
				for _, bad := range []string{"prompt-text", "watcher-output-text"} {
					for k, v := range l.Attrs {
						if l.Level >= slog.LevelInfo && (strings.Contains(v, bad) || strings.Contains(l.Message, bad)) {
							t.Errorf("the log line %q shows the job's prompt or output in %s", l.Message, k)
						}
					}
				}
				if l.Message != "scheduler: job fired" && l.Message != "scheduler: job ran" {
					continue
				}
				for k, v := range map[string]string{"job": j.ID, "name": "tea", "target": "chat-a"} {
					if l.Attrs[k] != v {
						t.Errorf("%q: %s = %q, want %q", l.Message, k, l.Attrs[k], v)
					}
					delete(l.Attrs, k)
				}
				got = append(got, l)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("log lines (-want +got):\n%s", diff)
			}
		})
	}
}

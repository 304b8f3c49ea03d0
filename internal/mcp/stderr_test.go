package mcp

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/logtest"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

func TestStderrLog(t *testing.T) {
	tests := []struct {
		name     string
		writes   []string
		logHas   []string
		tailHas  string
		maxLines int
	}{
		{
			name:    "secret split across writes",
			writes:  []string{"starting with " + configuredSecret[:5], configuredSecret[5:] + " in it\nnext line\n"},
			logHas:  []string{"line=starting with [REDACTED] in it", "line=next line"},
			tailHas: "starting with [REDACTED] in it\nnext line",
		},
		{
			name:    "last line without newline",
			writes:  []string{"partial"},
			logHas:  []string{"line=partial"},
			tailHas: "partial",
		},
		{
			name:    "long line truncated",
			writes:  []string{strings.Repeat("a", 5000) + "\nafter\n"},
			logHas:  []string{"[line truncated]", "line=after"},
			tailHas: "after",
		},
		{
			name:     "log budget",
			writes:   []string{strings.Repeat(strings.Repeat("b", 1000)+"\n", 200)},
			logHas:   []string{"log limit reached"},
			maxLines: maxStderrLogged/1000 + 1,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := logtest.New()
			l := newStderrLog(slog.New(rec), redactor.New([]string{configuredSecret}), "s")
			for _, w := range tt.writes {
				if n, err := l.Write([]byte(w)); n != len(w) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			l.finish()
			logs := rec.Text()
			checkAbsent(t, "the log", "the secret", logs, configuredSecret)
			checkAbsent(t, "the tail", "the secret", l.tail(), configuredSecret)
			for _, want := range tt.logHas {
				if !strings.Contains(logs, want) {
					t.Errorf("the log lacks %q", want)
				}
			}
			if !strings.Contains(l.tail(), tt.tailHas) {
				t.Errorf("tail = %q, want it to hold %q", l.tail(), tt.tailHas)
			}
			if len(l.tail()) > stderrTailSize {
				t.Errorf("tail is %d bytes, more than %d", len(l.tail()), stderrTailSize)
			}
			if n := len(rec.Lines()); tt.maxLines > 0 && n > tt.maxLines {
				t.Errorf("%d log lines, want at most %d", n, tt.maxLines)
			}
		})
	}
}

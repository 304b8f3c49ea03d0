package spawnpolicy

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/logtest"
)

func TestPrepareLogsNamesNeverValues(t *testing.T) {
	tests := []struct {
		name        string
		hooks       []Hook
		explicit    map[string]*string
		wantDebug   bool
		wantRemoved []string
	}{
		{
			name:        "a successful prepare logs the removed names at Debug",
			wantDebug:   true,
			wantRemoved: []string{"ALIAS", "ANTHROPIC_API_KEY", "DB_PASSWORD", "GITHUB_TOKEN", "GOOGLE_CLIENT_SECRET", "GoogleCalendar__ClientSecret", "OPENAI_API_KEY", "TELEGRAM_BOT_TOKEN", "Telegram__BotToken", "Telegram__Speech__ApiKey"},
		},
		{
			name:        "explicit secrets are not logged either",
			explicit:    map[string]*string{"GITHUB_TOKEN": ptr(secretGitHub), "PASSED": ptr(secretDatabase)},
			wantDebug:   true,
			wantRemoved: []string{"ALIAS", "ANTHROPIC_API_KEY", "DB_PASSWORD", "GITHUB_TOKEN", "GOOGLE_CLIENT_SECRET", "GoogleCalendar__ClientSecret", "OPENAI_API_KEY", "TELEGRAM_BOT_TOKEN", "Telegram__BotToken", "Telegram__Speech__ApiKey"},
		},
		{
			name: "a failing hook logs nothing with a value",
			hooks: []Hook{func(c Context) (Context, error) {
				return Context{}, errors.New("refused")
			}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := logtest.New()
			logger := slog.New(h).With("component", "test")
			opts := DefaultOptions()
			opts.SecretValues = testSecrets()
			opts.Hooks = tt.hooks
			p := newTestPolicy(t, opts, logger, with(hostEnv(), "ALIAS", secretAlias))
			req := bashRequest()
			req.Env = tt.explicit
			_, _ = p.Prepare(req)
			_ = p.Explain()
			_ = p.Summary()

			records := h.Lines()
			for i, record := range records {
				for j, secret := range testSecrets() {
					if strings.Contains(record, secret) {
						t.Errorf("log record %d contains secret #%d (%d bytes)", i, j, len(secret))
					}
				}
			}
			var debug []string
			for _, record := range records {
				if strings.HasPrefix(record, "DEBUG process environment prepared") {
					debug = append(debug, record)
				}
			}
			if !tt.wantDebug {
				if len(debug) != 0 {
					t.Errorf("got %d debug records, want none", len(debug))
				}
				return
			}
			if len(debug) != 1 {
				t.Fatalf("got %d debug records, want 1: %q", len(debug), debug)
			}
			for _, attr := range []string{"purpose=BashTool", "origin=bash", "scope=chat:1"} {
				if !strings.Contains(debug[0], attr) {
					t.Errorf("debug record %q lacks %s", debug[0], attr)
				}
			}
			want := "removed=[" + strings.Join(tt.wantRemoved, " ") + "]"
			if !strings.Contains(debug[0], want) {
				t.Errorf("debug record %q lacks %s", debug[0], want)
			}
		})
	}
}

func TestPrepareLogsNothingAboveDebug(t *testing.T) {
	h := logtest.New()
	logger := slog.New(levelFilter{Handler: h, min: slog.LevelInfo})
	p := newTestPolicy(t, DefaultOptions(), logger, hostEnv())
	if _, err := p.Prepare(bashRequest()); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if got := h.Lines(); len(got) != 0 {
		t.Errorf("got %d records with Debug off, want none: %q", len(got), got)
	}
}

// levelFilter drops records below min.
type levelFilter struct {
	slog.Handler
	min slog.Level
}

// Enabled reports whether level reaches min.
func (f levelFilter) Enabled(_ context.Context, level slog.Level) bool { return level >= f.min }

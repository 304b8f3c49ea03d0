package mcp

import (
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/logtest"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// TestDiscoveryHookFailure checks that a host hook that refuses a server's
// spawn makes its discovery fail with the hook's message, not
// the bash tool's wording, and that the log line is redacted.
func TestDiscoveryHookFailure(t *testing.T) {
	tests := []struct {
		name string
		hook spawnpolicy.Hook
		want string
	}{
		{name: "error", want: "no servers here", hook: func(spawnpolicy.Context) (spawnpolicy.Context, error) {
			return spawnpolicy.Context{}, errors.New("no servers here; key " + configuredSecret)
		}},
		{name: "panic", want: "hook exploded", hook: func(spawnpolicy.Context) (spawnpolicy.Context, error) {
			panic("hook exploded; key " + configuredSecret)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := logtest.New()
			logger := slog.New(logs)
			ext := New(Config{Servers: []ServerConfig{fakeServer(t, "fake")}}, WithLogger(logger), WithTempDir(t.TempDir()))
			a, err := agent.New(agenttest.NewFauxProvider(), newPolicy(t, tt.hook), redactor.New([]string{configuredSecret}),
				agent.WithWorkspace(t.TempDir()), agent.WithExtensions(ext), agent.WithLogger(logger))
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Start(t.Context()); err != nil {
				t.Fatalf("Start: %v", err)
			}
			if err := ext.FirstRound(t.Context()); err != nil {
				t.Fatalf("FirstRound: %v", err)
			}
			t.Cleanup(func() { a.Close(); _ = ext.Close() })
			text := logs.Text()
			// safe keeps the secret out of failure messages.
			safe := redactor.New([]string{configuredSecret}).Redact
			var line string
			for l := range strings.SplitSeq(text, "\n") {
				if strings.Contains(l, "server unavailable") {
					line = l
				}
			}
			if !strings.Contains(line, tt.want) {
				t.Errorf("the unavailable server's log line %q lacks the hook's message %q", safe(line), tt.want)
			}
			if strings.Contains(line, "process environment hook failed") {
				t.Errorf("discovery used the bash tool's wording: %q", safe(line))
			}
			if strings.Contains(text, configuredSecret) {
				t.Error("the log holds the secret the hook's message quoted")
			}
			if !strings.Contains(line, redactor.Token) {
				t.Errorf("the log line %q is not redacted", safe(line))
			}
		})
	}
}

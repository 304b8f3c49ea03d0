package chat

import (
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// New rejects a configuration without its required parts, a nil Redactor
// among them: the last line of defence before Telegram is never silently a
// no-op.
func TestNewRejectsIncompleteConfig(t *testing.T) {
	h := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider()})
	valid := func(dir string) Config {
		return Config{Token: "4242424242:x", AllowedUserIDs: []int64{userID}, Agent: h.agent, Redactor: redactor.New(nil), AgentDir: dir, WorkspaceDir: dir}
	}
	tests := []struct {
		name    string
		change  func(*Config)
		wantErr string
	}{
		{"no redactor", func(c *Config) { c.Redactor = nil }, "chat: no redactor"},
		{"no token", func(c *Config) { c.Token = "" }, "chat: the bot token is empty"},
		{"no agent", func(c *Config) { c.Agent = nil }, "chat: no agent"},
		{"no allowed users", func(c *Config) { c.AllowedUserIDs = nil }, "chat: no allowed users"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := valid(t.TempDir())
			tt.change(&cfg)
			host, err := New(cfg)
			if err == nil {
				host.journal.Close()
				t.Fatalf("New succeeded, want %q", tt.wantErr)
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("New = %v, want %q", err, tt.wantErr)
			}
		})
	}
}

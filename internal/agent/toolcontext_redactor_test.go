package agent_test

import (
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// TestToolContextRedactor checks that a session's tool context, and a copy
// for an extension, hand tools the agent's redactor, and that a context
// without a session hands out nil, which redacts nothing.
func TestToolContextRedactor(t *testing.T) {
	a := newTestAgent(t, agenttest.NewFauxProvider())
	tc := openSession(t, a, agent.SessionOptions{}).ToolContext()
	tests := []struct {
		name string
		tc   *agent.ToolContext
		want *redactor.Redactor
	}{
		{name: "session", tc: tc, want: a.Redactor()},
		{name: "extension copy", tc: tc.WithOrigin("ext"), want: a.Redactor()},
		{name: "no session", tc: &agent.ToolContext{}, want: nil},
		{name: "nil", tc: nil, want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := tt.tc.Redactor()
			if got != tt.want {
				t.Fatalf("Redactor() = %p, want %p", got, tt.want)
			}
			if redacted := got.Redact("key " + testSecret); (redacted == "key "+redactor.Token) != (tt.want != nil) {
				t.Errorf("the redactor redacts testSecret: %v, want %v", redacted != "key "+testSecret, tt.want != nil)
			}
		})
	}
}

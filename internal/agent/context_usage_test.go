package agent_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

func TestContextLimits(t *testing.T) {
	tests := []struct {
		name          string
		opts          []agent.Option
		wantWindow    int
		wantThreshold int
	}{
		{"defaults", nil, agent.DefaultContextWindow, agent.DefaultContextWindow - agent.DefaultContextReserve},
		{"small window: a quarter reserved", []agent.Option{agent.WithContextWindow(8000)}, 8000, 6000},
		{"explicit reserve", []agent.Option{agent.WithContextWindow(8000), agent.WithContextReserve(1000)}, 8000, 7000},
		{"no reserve", []agent.Option{agent.WithContextWindow(8000), agent.WithContextReserve(0)}, 8000, 8000},
		{"reserve capped at half", []agent.Option{agent.WithContextWindow(8000), agent.WithContextReserve(7000)}, 8000, 4000},
		{"invalid values ignored", []agent.Option{agent.WithContextWindow(0), agent.WithContextReserve(-5)}, agent.DefaultContextWindow, agent.DefaultContextWindow - agent.DefaultContextReserve},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newTestAgent(t, agenttest.NewFauxProvider(), tt.opts...)
			window, threshold := a.ContextLimits()
			if window != tt.wantWindow || threshold != tt.wantThreshold {
				t.Errorf("limits = %d, %d; want %d, %d", window, threshold, tt.wantWindow, tt.wantThreshold)
			}
		})
	}
}

// TestContextUsage checks that the usage counts the provider's prompt
// tokens of the last request plus an estimate of what came after.
func TestContextUsage(t *testing.T) {
	faux := agenttest.NewFauxProvider(answer("12345678", 500))
	a := newTestAgent(t, faux, agent.WithContextWindow(1000), agent.WithContextReserve(100))
	s := openSession(t, a, agent.SessionOptions{})
	if got := s.ContextUsage(); got.Tokens != 0 || got.Percent != 0 {
		t.Errorf("usage of an empty session = %+v, want 0 tokens", got)
	}
	prompt(t, s, "hello")
	// 500 reported tokens, then the answer: 4 for the message, 2 for its
	// 8 bytes.
	want := agent.ContextUsage{Tokens: 506, Window: 1000, Threshold: 900, Percent: 50}
	if diff := cmp.Diff(want, s.ContextUsage()); diff != "" {
		t.Errorf("ContextUsage (-want +got):\n%s", diff)
	}
}

func TestEstimateMessages(t *testing.T) {
	tests := []struct {
		name string
		msgs []agent.Message
		want int
	}{
		{"none", nil, 0},
		{"text", []agent.Message{{Role: agent.RoleUser, Content: []agent.Content{agent.Text("abcdefgh")}}}, agent.MessageTokens + 2},
		{"image", []agent.Message{{Role: agent.RoleUser, Content: []agent.Content{agent.Image("image/png", []byte{1, 2, 3})}}}, agent.MessageTokens + agent.ImageTokens},
		{"tool call", []agent.Message{{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{Name: "bash", Arguments: `{"c":"x"}`}}}}, agent.MessageTokens + 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := agent.EstimateMessages(tt.msgs); got != tt.want {
				t.Errorf("estimateMessages = %d, want %d", got, tt.want)
			}
		})
	}
}

package agent

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestContextLimits(t *testing.T) {
	tests := []struct {
		name          string
		opts          []Option
		wantWindow    int
		wantThreshold int
	}{
		{"defaults", nil, DefaultContextWindow, DefaultContextWindow - DefaultContextReserve},
		{"small window: a quarter reserved", []Option{WithContextWindow(8000)}, 8000, 6000},
		{"explicit reserve", []Option{WithContextWindow(8000), WithContextReserve(1000)}, 8000, 7000},
		{"no reserve", []Option{WithContextWindow(8000), WithContextReserve(0)}, 8000, 8000},
		{"reserve capped at half", []Option{WithContextWindow(8000), WithContextReserve(7000)}, 8000, 4000},
		{"invalid values ignored", []Option{WithContextWindow(0), WithContextReserve(-5)}, DefaultContextWindow, DefaultContextWindow - DefaultContextReserve},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newTestAgent(t, NewFauxProvider(), tt.opts...)
			window, threshold := a.cfg.contextLimits()
			if window != tt.wantWindow || threshold != tt.wantThreshold {
				t.Errorf("limits = %d, %d; want %d, %d", window, threshold, tt.wantWindow, tt.wantThreshold)
			}
		})
	}
}

// TestContextUsage checks that the usage counts the provider's prompt
// tokens of the last request plus an estimate of what came after.
func TestContextUsage(t *testing.T) {
	faux := NewFauxProvider(answer("12345678", 500))
	a := newTestAgent(t, faux, WithContextWindow(1000), WithContextReserve(100))
	s := openSession(t, a, SessionOptions{})
	if got := s.ContextUsage(); got.Tokens != 0 || got.Percent != 0 {
		t.Errorf("usage of an empty session = %+v, want 0 tokens", got)
	}
	prompt(t, s, "hello")
	// 500 reported tokens, then the answer: 4 for the message, 2 for its
	// 8 bytes.
	want := ContextUsage{Tokens: 506, Window: 1000, Threshold: 900, Percent: 50}
	if diff := cmp.Diff(want, s.ContextUsage()); diff != "" {
		t.Errorf("ContextUsage (-want +got):\n%s", diff)
	}
}

func TestEstimateMessages(t *testing.T) {
	tests := []struct {
		name string
		msgs []Message
		want int
	}{
		{"none", nil, 0},
		{"text", []Message{{Role: RoleUser, Content: []Content{Text("abcdefgh")}}}, messageTokens + 2},
		{"image", []Message{{Role: RoleUser, Content: []Content{Image("image/png", []byte{1, 2, 3})}}}, messageTokens + imageTokens},
		{"tool call", []Message{{Role: RoleAssistant, ToolCalls: []ToolCall{{Name: "bash", Arguments: `{"c":"x"}`}}}}, messageTokens + 3},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := estimateMessages(tt.msgs); got != tt.want {
				t.Errorf("estimateMessages = %d, want %d", got, tt.want)
			}
		})
	}
}

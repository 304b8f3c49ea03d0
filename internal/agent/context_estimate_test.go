package agent_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// TestContextUsageCountsSystemPromptAndTools checks the estimate of a
// provider that reports no usage: the system prompt and the tools' specs
// are part of every request, so they are part of the count, before the
// first turn and after it; reported prompt tokens win when there are some.
func TestContextUsageCountsSystemPromptAndTools(t *testing.T) {
	system := strings.Repeat("s", 4000)
	tool := agenttest.NewTool("lookup", `{"type":"object","properties":{"q":{"type":"string","description":"`+strings.Repeat("d", 1000)+`"}}}`, nil)
	spec := tool.Spec()
	overhead := (len(system) + agent.MessageTokens*agent.CharsPerToken + len(spec.Name) + len(spec.Description) + len(spec.Parameters) + agent.ToolSpecOverhead) / agent.CharsPerToken
	tests := []struct {
		name      string
		responses []agenttest.FauxResponse
		prompts   []string
		want      int
	}{
		{"before any turn", nil, nil, overhead},
		{"no usage reported", []agenttest.FauxResponse{agenttest.FauxText("12345678")}, []string{"abcdefgh"},
			overhead + 2*agent.MessageTokens + 2 + 2},
		{"reported prompt tokens win", []agenttest.FauxResponse{answer("12345678", 5000)}, []string{"abcdefgh"},
			5000 + agent.MessageTokens + 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newTestAgent(t, agenttest.NewFauxProvider(tt.responses...),
				agent.WithSystemPrompt(func(agent.SessionInfo) string { return system }), agent.WithTools(tool))
			s := openSession(t, a, agent.SessionOptions{})
			for _, p := range tt.prompts {
				prompt(t, s, p)
			}
			if diff := cmp.Diff(tt.want, s.ContextUsage().Tokens); diff != "" {
				t.Errorf("Tokens (-want +got):\n%s", diff)
			}
		})
	}
}

// TestCompactionEstimateIsConsistent checks that a compaction is measured
// with the same yardstick before and after: with a long summary of a short
// conversation the context grows, and the numbers say so.
func TestCompactionEstimateIsConsistent(t *testing.T) {
	system := strings.Repeat("s", 4000)
	faux := agenttest.NewFauxProvider(agenttest.FauxText("a"), agenttest.FauxText("b"), agenttest.FauxText(strings.Repeat("summary ", 400)))
	a := newTestAgent(t, faux, agent.WithSystemPrompt(func(agent.SessionInfo) string { return system }), agent.WithCompactionKeepTurns(1))
	s := openSession(t, a, agent.SessionOptions{})
	prompt(t, s, "one")
	prompt(t, s, "two")
	before := s.ContextUsage().Tokens
	if before < len(system)/agent.CharsPerToken {
		t.Fatalf("before = %d tokens, less than the system prompt alone", before)
	}
	if err := s.Compact(t.Context()); err != nil {
		t.Fatalf("Compact: %v", err)
	}
	after := s.ContextUsage().Tokens
	if after <= before {
		t.Errorf("after = %d, before = %d: a 3200-byte summary of two short turns must count as growth", after, before)
	}
}

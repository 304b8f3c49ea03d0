package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// usageRecorder collects the usage reports of an agent.
type usageRecorder struct {
	mu      sync.Mutex
	reports []agent.UsageReport
	turns   []string
}

type turnKey struct{}

func (r *usageRecorder) record(ctx context.Context, rep agent.UsageReport) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reports = append(r.reports, rep)
	turn, _ := ctx.Value(turnKey{}).(string)
	r.turns = append(r.turns, turn)
}

func TestUsageRecorderGetsEveryResponse(t *testing.T) {
	respond := func(resp agent.Response) agenttest.FauxResponse {
		return agenttest.FauxFunc(func(context.Context, agent.Request, func(string)) (agent.Response, error) { return resp, nil })
	}
	provider := agenttest.NewFauxProvider(
		respond(agent.Response{ToolCalls: []agent.ToolCall{{Name: "nope", Arguments: "{}"}}, FinishReason: "tool_calls",
			Usage: agent.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}}),
		respond(agent.Response{Text: "done", FinishReason: "stop", Model: "fallback-model",
			Usage: agent.Usage{PromptTokens: 120, CompletionTokens: 5, TotalTokens: 125, CachedTokens: 100}}),
	)
	rec := &usageRecorder{}
	a := newTestAgent(t, provider, agent.WithUsageRecorder(rec.record))
	s := openSession(t, a, agent.SessionOptions{ID: "chat-1", Scope: "42"})
	ctx := context.WithValue(context.Background(), turnKey{}, "turn-7")
	res, err := s.Prompt(ctx, []agent.Content{agent.Text("hi")}, nil)
	if err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	want := []agent.UsageReport{
		{SessionID: "chat-1", Scope: "42", Model: "test-model", Usage: agent.Usage{PromptTokens: 100, CompletionTokens: 10, TotalTokens: 110}},
		{SessionID: "chat-1", Scope: "42", Model: "fallback-model", Usage: agent.Usage{PromptTokens: 120, CompletionTokens: 5, TotalTokens: 125, CachedTokens: 100}},
	}
	if diff := cmp.Diff(want, rec.reports); diff != "" {
		t.Errorf("usage reports (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"turn-7", "turn-7"}, rec.turns); diff != "" {
		t.Errorf("the recorder did not get the turn's context (-want +got):\n%s", diff)
	}
	wantTotal := agent.Usage{PromptTokens: 220, CompletionTokens: 15, TotalTokens: 235, CachedTokens: 100}
	if diff := cmp.Diff(wantTotal, res.Total); diff != "" || res.ToolCalls != 1 {
		t.Errorf("turn total (-want +got):\n%s\ntool calls %d, want 1", diff, res.ToolCalls)
	}
}

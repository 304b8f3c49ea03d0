package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// TestToolTimeout checks WithToolTimeout: a tool that runs out of time gets
// an error result saying so, whether it returns on its cancelled context or
// ignores it, and the turn goes on to the next request.
func TestToolTimeout(t *testing.T) {
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	tests := []struct {
		name    string
		timeout time.Duration
		run     func(ctx context.Context, call *agent.Call) (agent.Result, error)
		want    agent.Message
	}{
		{
			name:    "in time",
			timeout: time.Hour,
			run:     func(context.Context, *agent.Call) (agent.Result, error) { return agent.TextResult("done"), nil },
			want:    agent.Message{Role: agent.RoleTool, ToolCallID: "c1", ToolName: "slow", Content: []agent.Content{agent.Text("done")}},
		},
		{
			name:    "returns on its context",
			timeout: 10 * time.Millisecond,
			run: func(ctx context.Context, _ *agent.Call) (agent.Result, error) {
				<-ctx.Done()
				return agent.Result{}, ctx.Err()
			},
			want: agent.Message{Role: agent.RoleTool, ToolCallID: "c1", ToolName: "slow", IsError: true, Content: []agent.Content{agent.Text(`Tool "slow" timed out after 10ms`)}},
		},
		{
			name:    "ignores its context",
			timeout: 10 * time.Millisecond,
			run: func(context.Context, *agent.Call) (agent.Result, error) {
				<-release
				return agent.TextResult("too late"), nil
			},
			want: agent.Message{Role: agent.RoleTool, ToolCallID: "c1", ToolName: "slow", IsError: true, Content: []agent.Content{agent.Text(`Tool "slow" timed out after 10ms`)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			faux := agenttest.NewFauxProvider(agenttest.FauxToolCalls(agent.ToolCall{ID: "c1", Name: "slow", Arguments: `{}`}), agenttest.FauxText("next"))
			a := newTestAgent(t, faux, agent.WithTools(agenttest.NewTool("slow", "", tt.run)),
				agent.WithToolTimeout(tt.timeout), agent.WithAbortGrace(10*time.Millisecond))
			s := openSession(t, a, agent.SessionOptions{})
			res, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, nil)
			if err != nil {
				t.Fatalf("Prompt: %v", err)
			}
			if res.Text != "next" {
				t.Errorf("the turn ended with %q, want the next answer", res.Text)
			}
			msgs := s.Messages()
			if len(msgs) != 4 {
				t.Fatalf("history has %d messages, want 4", len(msgs))
			}
			if diff := cmp.Diff(tt.want, msgs[2], ignoreTime); diff != "" {
				t.Errorf("tool result (-want +got):\n%s", diff)
			}
		})
	}
}

package agent

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
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
		run     func(ctx context.Context, call *Call) (Result, error)
		want    Message
	}{
		{
			name:    "in time",
			timeout: time.Hour,
			run:     func(context.Context, *Call) (Result, error) { return TextResult("done"), nil },
			want:    Message{Role: RoleTool, ToolCallID: "c1", ToolName: "slow", Content: []Content{Text("done")}},
		},
		{
			name:    "returns on its context",
			timeout: 10 * time.Millisecond,
			run: func(ctx context.Context, _ *Call) (Result, error) {
				<-ctx.Done()
				return Result{}, ctx.Err()
			},
			want: Message{Role: RoleTool, ToolCallID: "c1", ToolName: "slow", IsError: true, Content: []Content{Text(`Tool "slow" timed out after 10ms`)}},
		},
		{
			name:    "ignores its context",
			timeout: 10 * time.Millisecond,
			run: func(context.Context, *Call) (Result, error) {
				<-release
				return TextResult("too late"), nil
			},
			want: Message{Role: RoleTool, ToolCallID: "c1", ToolName: "slow", IsError: true, Content: []Content{Text(`Tool "slow" timed out after 10ms`)}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			faux := NewFauxProvider(FauxToolCalls(ToolCall{ID: "c1", Name: "slow", Arguments: `{}`}), FauxText("next"))
			a := newTestAgent(t, faux, WithTools(newTool("slow", "", tt.run)),
				WithToolTimeout(tt.timeout), WithAbortGrace(10*time.Millisecond))
			s := openSession(t, a, SessionOptions{})
			res, err := s.Prompt(context.Background(), []Content{Text("go")}, nil)
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

package agent_test

import (
	"context"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// frontStub is a front end a turn is prompted with.
type frontStub struct{ name string }

// TestFrontEndReachesTools checks that the front end a turn is prompted
// with is what its tool calls and tool_call handlers find on their
// context, a call a provider's own loop bridges (Claude Code) too, so
// that approvals ask there, and that a turn prompted without one finds
// none.
func TestFrontEndReachesTools(t *testing.T) {
	front := &frontStub{name: "chat"}
	handed := func(ctx context.Context) context.Context { return agent.WithFrontEnd(ctx, front) }
	tests := []struct {
		name string
		ctx  func(context.Context) context.Context
		// bridged makes the call from inside the provider's Complete.
		bridged bool
		want    any
	}{
		{"handed", handed, false, front},
		{"handed, bridged", handed, true, front},
		{"none", func(ctx context.Context) context.Context { return ctx }, false, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var inTool, inHandler recorder[any]
			tool := agent.NewTool(agent.ToolSpec{Name: "look"}, func(ctx context.Context, _ *agent.Call, _ struct{}) (agent.Result, error) {
				inTool.add(agent.FrontEnd(ctx))
				return agent.TextResult("ok"), nil
			})
			ext := &funcExtension{name: "watch", activate: func(_ context.Context, api *agent.API) error {
				api.OnToolCall(func(ctx context.Context, _ *agent.ToolCallEvent) error {
					inHandler.add(agent.FrontEnd(ctx))
					return nil
				})
				return nil
			}}
			provider := agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("look", `{}`)), agenttest.FauxText("end"))
			if tt.bridged {
				provider = agenttest.NewFauxProvider(agenttest.FauxFunc(func(ctx context.Context, _ agent.Request, _ func(string)) (agent.Response, error) {
					_, err := agent.RunBridgedCall(ctx, "", agenttest.FauxCall("look", `{}`))
					return agent.Response{Text: "end"}, err
				}))
			}
			a := newTestAgent(t, provider, agent.WithTools(tool), agent.WithExtensions(ext))
			s := openSession(t, a, agent.SessionOptions{Scope: "telegram:1"})
			if _, err := s.Prompt(tt.ctx(t.Context()), []agent.Content{agent.Text("go")}, nil); err != nil {
				t.Fatal(err)
			}
			for what, got := range map[string][]any{"the tool": inTool.all(), "the handler": inHandler.all()} {
				if len(got) != 1 || got[0] != tt.want {
					t.Errorf("%s found %v, want [%v]", what, got, tt.want)
				}
			}
		})
	}
}

package agent_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// TestRunBridgedCall runs a tool call from inside a provider's Complete, as
// the Claude Code provider does for its bridge: the tool_call handlers see
// it, its result comes back redacted, and the history is a valid
// conversation of the call, its result and the answer.
func TestRunBridgedCall(t *testing.T) {
	tool := agenttest.NewTool("echo", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) {
		return agent.TextResult("out " + testSecret), nil
	})
	var seen []string
	ext := &funcExtension{name: "watch", activate: func(ctx context.Context, api *agent.API) error {
		api.OnToolCall(func(ctx context.Context, ev *agent.ToolCallEvent) error {
			seen = append(seen, ev.ToolName)
			return nil
		})
		return nil
	}}
	var got agent.Result
	provider := agenttest.NewFauxProvider(agenttest.FauxFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		var err error
		got, err = agent.RunBridgedCall(ctx, "looking", agenttest.FauxCall("echo", `{}`))
		if err != nil {
			return agent.Response{}, err
		}
		return agent.Response{Text: "done"}, nil
	}))
	a := newTestAgent(t, provider, agent.WithTools(tool), agent.WithExtensions(ext))
	s := openSession(t, a, agent.SessionOptions{})
	if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, nil); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	if jsonLeaks(t, got) {
		t.Fatal("the secret leaked into the bridged call's result")
	}
	if diff := cmp.Diff([]string{"echo"}, seen); diff != "" {
		t.Errorf("tool_call handlers saw (-want +got):\n%s", diff)
	}
	var roles []agent.Role
	for _, m := range s.Messages() {
		roles = append(roles, m.Role)
	}
	if diff := cmp.Diff([]agent.Role{agent.RoleUser, agent.RoleAssistant, agent.RoleTool, agent.RoleAssistant}, roles); diff != "" {
		t.Errorf("history roles (-want +got):\n%s", diff)
	}
	if _, err := agent.RunBridgedCall(context.Background(), "", agenttest.FauxCall("echo", `{}`)); !errors.Is(err, agent.ErrNotInTurn) {
		t.Errorf("a call outside a turn: err = %v, want ErrNotInTurn", err)
	}
}

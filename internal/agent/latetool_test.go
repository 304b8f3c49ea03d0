package agent_test

import (
	"context"
	"slices"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// A tool an extension adds after activation is offered from the next turn
// of a session already open, and runs; a second tool of the same name is
// refused.
func TestAddToolAfterActivation(t *testing.T) {
	var api *agent.API
	ext := &funcExtension{name: "late", activate: func(_ context.Context, a *agent.API) error { api = a; return nil }}
	faux := agenttest.NewFauxProvider(agenttest.FauxText("before"))
	a := newTestAgent(t, faux, agent.WithExtensions(ext))
	s := openSession(t, a, agent.SessionOptions{})
	if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("one")}, nil); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	ran := false
	late := agenttest.NewTool("late_tool", `{"type":"object"}`, func(context.Context, *agent.Call) (agent.Result, error) {
		ran = true
		return agent.TextResult("late result"), nil
	})
	if err := api.AddTool(late); err != nil {
		t.Fatalf("AddTool: %v", err)
	}
	if err := api.AddTool(agenttest.NewTool("late_tool", `{"type":"object"}`, nil)); err == nil {
		t.Error("a second tool named late_tool was added")
	}
	faux.Enqueue(agenttest.FauxToolCalls(agenttest.FauxCall("late_tool", `{}`)), agenttest.FauxText("after"))
	if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("two")}, nil); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	reqs := faux.Requests()
	offered := func(r agent.Request) bool {
		return slices.ContainsFunc(r.Tools, func(ts agent.ToolSpec) bool { return ts.Name == "late_tool" })
	}
	if offered(reqs[0]) {
		t.Error("the first turn, before AddTool, was offered late_tool")
	}
	if !offered(reqs[len(reqs)-1]) {
		t.Error("the turn after AddTool was not offered late_tool")
	}
	if !ran {
		t.Error("the model's call of late_tool did not run it")
	}
	if !slices.Contains(s.Info().Tools, "late_tool") {
		t.Error("Session.Info does not list late_tool")
	}
}

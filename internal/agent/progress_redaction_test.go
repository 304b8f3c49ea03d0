package agent_test

import (
	"context"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// TestProgressHidesGrowingSecretPrefix is the security suite's
// progress-trickle vector in miniature: a tool that prints a secret a few
// bytes at a time reports a snapshot after each piece. No update event may
// show the secret's beginning while its end has not been printed; the final
// result shows the token.
func TestProgressHidesGrowingSecretPrefix(t *testing.T) {
	trickle := agenttest.NewTool("trickle", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) {
		out := "reading key: "
		for i := 0; i < len(testSecret); i += 3 {
			out += testSecret[i:min(i+3, len(testSecret))]
			call.Progress(agent.Result{Content: []agent.Content{agent.Text(out)}})
		}
		return agent.TextResult(out + "\ndone"), nil
	})
	faux := agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("trickle", `{}`)), agenttest.FauxText("ok"))
	a := newTestAgent(t, faux, agent.WithTools(trickle))
	s := openSession(t, a, agent.SessionOptions{ID: "trickle"})

	var events recorder[agent.Event]
	if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, events.add); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	updates := 0
	for _, ev := range events.all() {
		if ev.Kind != agent.EventToolUpdate && ev.Kind != agent.EventToolEnd {
			continue
		}
		for _, text := range []string{agent.TextOf(ev.Result.Content)} {
			for k := 4; k <= len(testSecret); k++ {
				if strings.Contains(text, testSecret[:k]) {
					t.Fatalf("a %s event shows %d of the secret's %d bytes", ev.Kind, k, len(testSecret))
				}
			}
		}
		if ev.Kind == agent.EventToolUpdate {
			updates++
		}
		if ev.Kind == agent.EventToolEnd && !strings.Contains(agent.TextOf(ev.Result.Content), "[REDACTED]") {
			t.Error("the final result does not show the token")
		}
	}
	if updates == 0 {
		t.Fatal("no progress update was emitted")
	}
}

// TestProgressDetailsKeepTheirNames checks that the hold-back of progress
// text does not touch Details: a key or value ending in a character that
// begins a secret ("total_bytes" and the secret "sk-...") stays whole.
func TestProgressDetailsKeepTheirNames(t *testing.T) {
	tool := agenttest.NewTool("counter", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) {
		call.Progress(agent.Result{Content: []agent.Content{agent.Text("working")}, Details: map[string]any{"total_bytes": 3, "status": "pass"}})
		return agent.TextResult("done"), nil
	})
	faux := agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("counter", `{}`)), agenttest.FauxText("ok"))
	a := newTestAgent(t, faux, agent.WithTools(tool))
	s := openSession(t, a, agent.SessionOptions{ID: "details"})
	var events recorder[agent.Event]
	if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, events.add); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	for _, ev := range events.all() {
		if ev.Kind != agent.EventToolUpdate {
			continue
		}
		if _, ok := ev.Result.Details["total_bytes"]; !ok {
			t.Errorf("the progress Details lost the key total_bytes: %v", ev.Result.Details)
		}
		if ev.Result.Details["status"] != "pass" {
			t.Errorf("the progress Details value %q was cut", ev.Result.Details["status"])
		}
		return
	}
	t.Fatal("no progress update")
}

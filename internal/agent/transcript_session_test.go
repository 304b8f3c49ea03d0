package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// TestDanglingCallsRepaired checks that a crash between a model answer and
// its tool results leaves a history the provider accepts.
func TestDanglingCallsRepaired(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.jsonl")
	a1, _ := json.Marshal(agent.TranscriptEntry{Type: agent.EntryMessage, Message: &agent.Message{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "1", Name: "x"}, {ID: "2", Name: "y"}}}})
	r1, _ := json.Marshal(agent.TranscriptEntry{Type: agent.EntryMessage, Message: &agent.Message{Role: agent.RoleTool, ToolCallID: "1", ToolName: "x", Content: []agent.Content{agent.Text("ok")}}})
	if err := os.WriteFile(path, []byte(agent.MessageLine(t, "u")+"\n"+string(a1)+"\n"+string(r1)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newTestAgent(t, agenttest.NewFauxProvider(), agent.WithSessionDir(dir))
	s := openSession(t, a, agent.SessionOptions{ID: "d"})
	msgs := s.Messages()
	if len(msgs) != 4 || msgs[3].ToolCallID != "2" || agent.TextOf(msgs[3].Content) != agent.AbortedText {
		t.Fatalf("history has %d messages; want the missing result appended", len(msgs))
	}
	s.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != 4 {
		t.Errorf("transcript has %d lines, want 4", n)
	}
}

// TestToolResultKeptWhenTranscriptFails checks that a tool result the
// transcript could not take is still in the history, so the next request is
// valid, and that the turn reports the failure.
func TestToolResultKeptWhenTranscriptFails(t *testing.T) {
	echo := agenttest.NewTool("echo", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) {
		return agent.TextResult("ok"), nil
	})
	dir := t.TempDir()
	faux := agenttest.NewFauxProvider(
		agenttest.FauxToolCalls(agent.ToolCall{ID: "c1", Name: "echo", Arguments: `{}`}, agent.ToolCall{ID: "c2", Name: "echo", Arguments: `{}`}),
		agenttest.FauxText("after"),
	)
	a := newTestAgent(t, faux, agent.WithTools(echo), agent.WithSessionDir(dir))
	s := openSession(t, a, agent.SessionOptions{ID: "f"})
	// Writes: 1 the user message, 2 the assistant's calls, 3 c1's result.
	s.FailTranscriptAppend(3)

	var log eventLog
	if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, log.add); err == nil {
		t.Fatal("Prompt succeeded; want the transcript failure")
	}
	if !contains(kindsOf(log.all()), agent.EventError) {
		t.Errorf("events %v hold no EventError", kindsOf(log.all()))
	}
	wantCalls := []string{"c1", "c2"}
	if diff := cmp.Diff(wantCalls, answeredCalls(s.Messages())); diff != "" {
		t.Errorf("answered calls in memory (-want +got):\n%s", diff)
	}

	if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("again")}, nil); err != nil {
		t.Fatalf("the next turn failed: %v", err)
	}
	reqs := faux.Requests()
	if diff := cmp.Diff(wantCalls, answeredCalls(reqs[len(reqs)-1].Messages)); diff != "" {
		t.Errorf("answered calls in the next request (-want +got):\n%s", diff)
	}

	s.Close()
	s2 := openSession(t, a, agent.SessionOptions{ID: "f"})
	if diff := cmp.Diff(wantCalls, answeredCalls(s2.Messages())); diff != "" {
		t.Errorf("answered calls after reopening (-want +got):\n%s", diff)
	}
}

// answeredCalls lists the ids of the tool calls of msgs that have a result
// right after their assistant message, in order.
func answeredCalls(msgs []agent.Message) []string {
	var out []string
	for i, m := range msgs {
		if m.Role != agent.RoleAssistant {
			continue
		}
		results := map[string]bool{}
		for _, r := range msgs[i+1:] {
			if r.Role != agent.RoleTool {
				break
			}
			results[r.ToolCallID] = true
		}
		for _, c := range m.ToolCalls {
			if results[c.ID] {
				out = append(out, c.ID)
			}
		}
	}
	return out
}

package agent_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// TestTranscriptRedactsWhatTheModelWrote checks that the transcript
// stores what the user and the model wrote redacted, as it leaves: the
// user's text, the model's text, and its tool calls' names and arguments.
// The agent's processes may read the file, so a secret in it would reach
// them.
func TestTranscriptRedactsWhatTheModelWrote(t *testing.T) {
	echo := agenttest.NewTool("echo", "", func(context.Context, *agent.Call) (agent.Result, error) {
		return agent.TextResult("ok"), nil
	})
	faux := agenttest.NewFauxProvider(
		agenttest.FauxToolCalls(agenttest.FauxCall("echo", `{"say":"`+testSecret+`"}`)),
		agenttest.FauxText("the value is "+testSecret),
	)
	dir := t.TempDir()
	a := newTestAgent(t, faux, agent.WithSessionDir(dir), agent.WithTools(echo))
	s := openSession(t, a, agent.SessionOptions{ID: "persist"})
	if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("remember " + testSecret)}, nil); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	data, err := os.ReadFile(filepath.Join(dir, "persist.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	for i, line := range lines {
		if leaks(line) {
			t.Errorf("transcript line %d of %d holds the secret", i+1, len(lines))
		}
	}
	if n := strings.Count(string(data), redactor.Token); n < 3 {
		t.Errorf("the transcript holds %d redaction tokens, want at least 3 (user text, arguments, answer)", n)
	}
	// What was written reads back: the arguments are still JSON.
	s2 := openSession(t, newTestAgent(t, agenttest.NewFauxProvider(), agent.WithSessionDir(dir)), agent.SessionOptions{ID: "persist"})
	for _, m := range s2.Messages() {
		for _, c := range m.ToolCalls {
			if c.Arguments != `{"say":"`+redactor.Token+`"}` {
				t.Errorf("arguments read back as %d bytes, not the redacted JSON", len(c.Arguments))
			}
		}
	}
}

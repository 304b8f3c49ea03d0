package tools_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
)

// BenchmarkBashTrue is the whole bash tool path running true: prepare
// (filter, hooks, handlers), spawn, wait, and redaction of the result.
// The policy sees the real process environment, as the bare spawn does.
func BenchmarkBashTrue(b *testing.B) {
	f := newFixture(b, fixtureConfig{realEnviron: true})
	bash := tools.NewBash()
	red := f.agent.Redactor()
	tc := f.session.ToolContext()
	args := json.RawMessage(bashArgs("true", 0))
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		res, err := bash.Execute(ctx, &agent.Call{ID: "bench", Arguments: args, Context: tc})
		if err != nil || res.IsError {
			b.Fatalf("bash true: %v %q", err, agent.TextOf(res.Content))
		}
		_ = red.Redact(agent.TextOf(res.Content))
	}
}

// BenchmarkExecTrue is the bare spawn the tool path is measured against.
func BenchmarkExecTrue(b *testing.B) {
	for b.Loop() {
		if err := exec.Command("bash", "-c", "true").Run(); err != nil {
			b.Fatal(err)
		}
	}
}

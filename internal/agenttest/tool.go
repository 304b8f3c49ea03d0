package agenttest

import (
	"context"
	"encoding/json"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// Tool is a scripted [agent.Tool]: its spec, and run to answer each call.
type Tool struct {
	ToolSpec agent.ToolSpec
	Run      func(ctx context.Context, call *agent.Call) (agent.Result, error)
}

// NewTool returns a scripted tool named name, described as a test tool,
// with the JSON Schema params ("" for an object without properties).
func NewTool(name, params string, run func(ctx context.Context, call *agent.Call) (agent.Result, error)) *Tool {
	if params == "" {
		params = `{"type":"object","properties":{}}`
	}
	return &Tool{ToolSpec: agent.ToolSpec{Name: name, Description: "test tool " + name, Parameters: json.RawMessage(params)}, Run: run}
}

// Spec returns the tool's spec.
func (t *Tool) Spec() agent.ToolSpec { return t.ToolSpec }

// Execute answers call with Run.
func (t *Tool) Execute(ctx context.Context, call *agent.Call) (agent.Result, error) {
	return t.Run(ctx, call)
}

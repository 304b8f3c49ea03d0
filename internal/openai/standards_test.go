package openai

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/agent"
)

// TestEmptyParametersNotShared checks that each tool without a schema gets
// its own copy of the empty schema, so a change to one request's schema
// can never reach another request.
func TestEmptyParametersNotShared(t *testing.T) {
	req := agent.Request{Model: "m", Tools: []agent.ToolSpec{{Name: "a"}, {Name: "b"}}}
	first := buildChatRequest(req)
	raw, ok := first.Tools[0].Function.Parameters.(json.RawMessage)
	if !ok {
		t.Fatalf("parameters are a %T, want json.RawMessage", first.Tools[0].Function.Parameters)
	}
	for i := range raw {
		raw[i] = ' '
	}
	second := buildChatRequest(req)
	for i, tool := range append(first.Tools[1:], second.Tools...) {
		got, _ := tool.Function.Parameters.(json.RawMessage)
		if diff := cmp.Diff(`{"type":"object","properties":{}}`, string(got)); diff != "" {
			t.Errorf("tool %d's empty schema changed with another's (-want +got):\n%s", i, diff)
		}
	}
}

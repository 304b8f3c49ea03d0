package agent

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestSentinelErrorsArePrefixed checks that every exported sentinel error
// says it comes from the agent, as the package's other errors do.
func TestSentinelErrorsArePrefixed(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"ErrContextTooLong", ErrContextTooLong},
		{"ErrSessionClosed", ErrSessionClosed},
		{"ErrAgentClosed", ErrAgentClosed},
		{"ErrInsideTurn", ErrInsideTurn},
		{"ErrNothingToCompact", ErrNothingToCompact},
		{"ErrSpawnRefused", ErrSpawnRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if msg := tt.err.Error(); !strings.HasPrefix(msg, "agent: ") {
				t.Errorf("%s says %q, want the prefix \"agent: \"", tt.name, msg)
			}
		})
	}
}

// TestEmptyParametersNotShared checks that each tool without a schema gets
// its own copy of the empty schema, so a change to one request's schema
// can never reach another request.
func TestEmptyParametersNotShared(t *testing.T) {
	req := Request{Model: "m", Tools: []ToolSpec{{Name: "a"}, {Name: "b"}}}
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

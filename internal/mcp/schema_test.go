package mcp

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestToolSchema(t *testing.T) {
	tests := []struct {
		name string
		in   any
		want string
	}{
		{name: "nil", in: nil, want: `{"properties":{},"type":"object"}`},
		{name: "empty", in: map[string]any{}, want: `{"properties":{},"type":"object"}`},
		{
			name: "kept as is",
			in:   json.RawMessage(`{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"],"$schema":"x"}`),
			want: `{"$schema":"x","properties":{"n":{"minimum":1,"type":"integer"}},"required":["n"],"type":"object"}`,
		},
		{
			name: "forms the agent cannot read are dropped",
			in: json.RawMessage(`{"type":"object","properties":{"any":true,"tuple":{"type":"array","items":[{"type":"string"}]},
				"odd":{"type":{"x":1},"enum":"a","required":"b"}}}`),
			want: `{"properties":{"any":{},"odd":{},"tuple":{"type":"array"}},"type":"object"}`,
		},
		{name: "not an object", in: "string", want: `{"properties":{},"type":"object"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := toolSchema(tt.in)
			if err != nil {
				t.Fatalf("toolSchema: %v", err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Errorf("schema (-want +got):\n%s", diff)
			}
		})
	}
}

package agent_test

import (
	"encoding/json"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// FuzzParseSchema feeds the loop arbitrary parameter schemas, as an MCP
// server may send, and arguments: reading the schema and checking a call
// must return, never crash the bot (a stack overflow is not recoverable).
func FuzzParseSchema(f *testing.F) {
	f.Add(mcpLikeSchema, `{"query":"q","mode":"fast"}`)
	f.Add(cyclicSchema, `{"q":"x"}`)
	f.Add(`{"$defs":{"a":{"$ref":"#/$defs/b"},"b":{"items":{"$ref":"#/$defs/a"}}},"$ref":"#/$defs/a"}`, `{"a":[[[]]]}`)
	f.Add(`{"properties":{"t":{"$ref":"#"}},"additionalProperties":{"$dynamicRef":"#/properties"}}`, `{"t":{"t":{}}}`)
	f.Add(`{"$schema":"http://json-schema.org/draft-07/schema#","items":[{"$ref":"#/items/0"}]}`, `[1]`)
	f.Fuzz(func(t *testing.T, schema, args string) {
		s, _, err := agent.ParseSchema(json.RawMessage(schema))
		if err != nil {
			return
		}
		_, _ = agent.ParseArguments(s, args)
	})
}

package agent_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// mcpLikeSchema is a schema as MCP servers send them: boolean and $ref
// properties, items as a list, anyOf, and keywords the loop checks.
const mcpLikeSchema = `{
	"type": "object",
	"$defs": {"Mode": {"type": "string", "enum": ["fast", "slow"]}},
	"properties": {
		"query": {"type": "string"},
		"anything": true,
		"nothing": false,
		"mode": {"$ref": "#/$defs/Mode"},
		"pair": {"type": "array", "items": [{"type": "string"}, {"type": "integer"}]},
		"tags": {"type": "array", "items": {"type": "string"}},
		"limit": {"anyOf": [{"type": "integer"}, {"type": "null"}]},
		"odd": {"type": 7}
	},
	"required": ["query"]
}`

// logLines records what a slog text handler writes, one record a line,
// from any goroutine.
type logLines struct{ recorder[string] }

func (l *logLines) Write(p []byte) (int, error) {
	l.add(string(p))
	return len(p), nil
}

// String returns every record written so far.
func (l *logLines) String() string { return strings.Join(l.all(), "") }

// TestParseSchema checks what the loop reads of a schema, what it skips
// and notes, and which schemas are unusable.
func TestParseSchema(t *testing.T) {
	tests := []struct {
		name      string
		schema    string
		wantNotes []string
		wantErr   bool
	}{
		{name: "empty", schema: ``},
		{name: "plain", schema: `{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"]}`},
		{name: "boolean top", schema: `true`},
		{name: "MCP-like", schema: mcpLikeSchema, wantNotes: []string{
			"properties.limit.anyOf (not followed)",
			"properties.mode.$ref (not followed)",
			"properties.odd.type (not a type name or a list of them)",
			"properties.pair.items (a list of schemas is not checked)",
		}},
		{name: "property not a schema", schema: `{"properties":{"n":3}}`, wantNotes: []string{"properties.n (a JSON number, not a schema)"}},
		{name: "top-level oneOf", schema: `{"oneOf":[{"type":"object"}],"required":"n"}`, wantNotes: []string{
			"oneOf (not followed)",
		}},
		{name: "required not a list", schema: `{"required":{"n":true}}`, wantNotes: []string{"required (not a list of names)"}},
		{name: "not JSON", schema: `{"type":`, wantErr: true},
		{name: "a string", schema: `"object"`, wantErr: true},
		{name: "a list", schema: `[{"type":"object"}]`, wantErr: true},
		{name: "trailing data", schema: `{} {}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, notes, err := agent.ParseSchema(json.RawMessage(tt.schema))
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseSchema error = %v, want an error: %v", err, tt.wantErr)
			}
			if err == nil && s == nil {
				t.Fatal("parseSchema returned no schema and no error")
			}
			if diff := cmp.Diff(tt.wantNotes, notes); diff != "" {
				t.Errorf("notes (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnsupportedSchemaStarts checks that a tool whose schema the loop
// cannot fully read does not stop Start: the agent warns, naming the tool,
// checks what it understands and lets the rest through; a tool whose
// schema is unusable is left out with a warning, and the others stay.
func TestUnsupportedSchemaStarts(t *testing.T) {
	ok := func(ctx context.Context, call *agent.Call) (agent.Result, error) {
		return agent.TextResult("ok:" + string(call.Arguments)), nil
	}
	ext := &funcExtension{name: "mcp", activate: func(ctx context.Context, api *agent.API) error {
		api.RegisterTool(agenttest.NewTool("mcp__srv__search", mcpLikeSchema, ok))
		api.RegisterTool(agenttest.NewTool("mcp__srv__broken", `"not a schema"`, ok))
		return nil
	}}
	logs := &logLines{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))

	tests := []struct {
		name    string
		args    string
		want    string
		wantErr bool
	}{
		{name: "valid", args: `{"query":"q","anything":{"x":[1]},"mode":"other","pair":["a",1],"limit":null}`, want: "ok:"},
		{name: "unchecked keywords let through", args: `{"query":"q","mode":42,"pair":[1,"a"],"limit":"many","odd":1}`, want: "ok:"},
		{name: "required still checked", args: `{"tags":["a"]}`, want: `missing required property "query"`, wantErr: true},
		{name: "items still checked", args: `{"query":"q","tags":[1]}`, want: "arguments.tags[0]: expected string", wantErr: true},
		{name: "false property refused", args: `{"query":"q","nothing":1}`, want: "arguments.nothing: not allowed", wantErr: true},
		{name: "unusable tool left out", args: `{}`, want: `Tool "mcp__srv__broken" not found`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "mcp__srv__search"
			if strings.Contains(tt.name, "left out") {
				name = "mcp__srv__broken"
			}
			a := newTestAgent(t, agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall(name, tt.args)), agenttest.FauxText("end")),
				agent.WithExtensions(ext), agent.WithLogger(logger))
			var names []string
			for _, spec := range a.Tools() {
				names = append(names, spec.Name)
			}
			if diff := cmp.Diff([]string{"mcp__srv__search"}, names); diff != "" {
				t.Errorf("tools offered (-want +got):\n%s", diff)
			}
			s := openSession(t, a, agent.SessionOptions{})
			if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, nil); err != nil {
				t.Fatal(err)
			}
			got := s.Messages()[2]
			if text := agent.TextOf(got.Content); !strings.Contains(text, tt.want) {
				t.Errorf("result %q does not contain %q", text, tt.want)
			}
			if got.IsError != tt.wantErr {
				t.Errorf("IsError = %v, want %v", got.IsError, tt.wantErr)
			}
		})
	}
	for _, want := range []string{
		`tool=mcp__srv__search origin=mcp`,
		`properties.mode.$ref (not followed)`,
		`msg="agent: tool left out: its parameter schema is unusable" tool=mcp__srv__broken`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not contain %q:\n%s", want, logs.String())
		}
	}
}

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
// properties, anyOf, $defs and keywords beyond types (enum, minimum).
const mcpLikeSchema = `{
	"type": "object",
	"$defs": {"Mode": {"type": "string", "enum": ["fast", "slow"]}},
	"properties": {
		"query": {"type": "string"},
		"anything": true,
		"nothing": false,
		"mode": {"$ref": "#/$defs/Mode"},
		"tags": {"type": "array", "items": {"type": "string"}},
		"limit": {"anyOf": [{"type": "integer", "minimum": 1}, {"type": "null"}]}
	},
	"required": ["query"]
}`

// cyclicSchema refers to itself without consuming the value: jsonschema-go
// would validate the same value forever and overflow the stack, which no
// recover catches.
const cyclicSchema = `{"type":"object","properties":{"q":{"type":"string"}},"allOf":[{"$ref":"#"}]}`

// oddSchema is a schema jsonschema-go cannot read (a type that is not a
// name): its calls are checked only as objects.
const oddSchema = `{"type":"object","properties":{"q":{"type":"string"},"odd":{"type":7}},"required":["q"]}`

// logLines records what a slog text handler writes, one record a line,
// from any goroutine.
type logLines struct{ recorder[string] }

func (l *logLines) Write(p []byte) (int, error) {
	l.add(string(p))
	return len(p), nil
}

// String returns every record written so far.
func (l *logLines) String() string { return strings.Join(l.all(), "") }

// TestParseSchema checks which schemas the loop checks calls against,
// which only as objects (with the note saying why), and which are unusable.
func TestParseSchema(t *testing.T) {
	tests := []struct {
		name     string
		schema   string
		wantNote string
		wantErr  bool
	}{
		{name: "empty", schema: ``},
		{name: "plain", schema: `{"type":"object","properties":{"n":{"type":"integer","minimum":1}},"required":["n"]}`},
		{name: "boolean top", schema: `true`},
		{name: "MCP-like", schema: mcpLikeSchema},
		{name: "draft-07 without its #", schema: `{"$schema":"http://json-schema.org/draft-07/schema","type":"object"}`},
		{name: "a type that is no name", schema: oddSchema, wantNote: `not a schema jsonschema-go reads: invalid value for "type": "7"`},
		{name: "property not a schema", schema: `{"properties":{"n":3}}`, wantNote: `not a schema jsonschema-go reads: a JSON number where a schema belongs`},
		{name: "draft-04", schema: `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object"}`,
			wantNote: `$schema "http://json-schema.org/draft-04/schema#" is a draft jsonschema-go does not validate`},
		{name: "remote $ref", schema: `{"properties":{"a":{"$ref":"https://example.com/a.json"}}}`,
			wantNote: `not followed: $ref "https://example.com/a.json" is not a JSON pointer into the schema`},
		{name: "a pointer to nothing", schema: `{"properties":{"a":{"$ref":"#/$defs/none"}}}`,
			wantNote: `not resolved: JSON Pointer "/$defs/none": no key "none" in map`},
		{name: "a $ref to itself", schema: `{"$ref":"#"}`, wantNote: `not followed: its references lead back to "#"`},
		{name: "a $ref cycle through $defs", schema: `{"type":"object","allOf":[{"$ref":"#/$defs/a"}],"$defs":{"a":{"anyOf":[{"$ref":"#/$defs/b"}]},"b":{"$ref":"#/$defs/a"}}}`,
			wantNote: `not followed: its references lead back to "#/$defs/a"`},
		{name: "a recursive tree", schema: `{"type":"object","properties":{"child":{"$ref":"#"}}}`, wantNote: `not followed: its references lead back to "#"`},
		{name: "an escaped pointer", schema: `{"$defs":{"a/b~c":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a~1b~0c"}}}`},
		{name: "a percent-encoded pointer", schema: `{"$defs":{"a b":{"type":"string"}},"properties":{"x":{"$ref":"#/$defs/a%20b"}}}`},
		{name: "an anchor", schema: `{"$defs":{"a":{"$anchor":"x","type":"string"}},"properties":{"x":{"$ref":"#x"}}}`,
			wantNote: `not followed: $ref "#x" is not a JSON pointer into the schema`},
		{name: "not JSON", schema: `{"type":`, wantErr: true},
		{name: "a string", schema: `"object"`, wantErr: true},
		{name: "a list", schema: `[{"type":"object"}]`, wantErr: true},
		{name: "trailing data", schema: `{} {}`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, note, err := agent.ParseSchema(json.RawMessage(tt.schema))
			if (err != nil) != tt.wantErr {
				t.Fatalf("parseSchema error = %v, want an error: %v", err, tt.wantErr)
			}
			if err == nil && s == nil {
				t.Fatal("parseSchema returned no schema and no error")
			}
			if diff := cmp.Diff(tt.wantNote, note); diff != "" {
				t.Errorf("note (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUnsupportedSchemaStarts checks how the loop checks MCP servers'
// schemas: one jsonschema-go resolves is checked whole ($ref, anyOf and
// boolean schemas included); one it cannot read does not stop Start: the
// agent warns, naming the tool, and checks its calls only as objects; a
// tool whose schema is unusable is left out with a warning, and the others
// stay.
func TestUnsupportedSchemaStarts(t *testing.T) {
	ok := func(ctx context.Context, call *agent.Call) (agent.Result, error) {
		return agent.TextResult("ok:" + string(call.Arguments)), nil
	}
	ext := &funcExtension{name: "mcp", activate: func(ctx context.Context, api *agent.API) error {
		api.RegisterTool(agenttest.NewTool("mcp__srv__search", mcpLikeSchema, ok))
		api.RegisterTool(agenttest.NewTool("mcp__srv__odd", oddSchema, ok))
		api.RegisterTool(agenttest.NewTool("mcp__srv__cyclic", cyclicSchema, ok))
		api.RegisterTool(agenttest.NewTool("mcp__srv__broken", `"not a schema"`, ok))
		return nil
	}}
	logs := &logLines{}
	logger := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelWarn}))

	tests := []struct {
		name    string
		tool    string
		args    string
		want    string
		wantErr bool
	}{
		{name: "valid", args: `{"query":"q","anything":{"x":[1]},"mode":"fast","limit":null}`, want: "ok:"},
		{name: "required checked", args: `{"tags":["a"]}`, want: `required: missing properties: ["query"]`, wantErr: true},
		{name: "items checked", args: `{"query":"q","tags":[1]}`, want: `validating /properties/tags/items: type: 1 has type "integer", want "string"`, wantErr: true},
		{name: "false property refused", args: `{"query":"q","nothing":1}`, want: "/properties/nothing", wantErr: true},
		{name: "$ref followed", args: `{"query":"q","mode":"other"}`, want: "enum: other does not equal any of: [fast slow]", wantErr: true},
		{name: "anyOf followed", args: `{"query":"q","limit":0}`, want: "/properties/limit", wantErr: true},
		{name: "unreadable schema: an object passes", tool: "mcp__srv__odd", args: `{"odd":1}`, want: "ok:"},
		{name: "unreadable schema: still an object", tool: "mcp__srv__odd", args: `[1]`, want: "must be a JSON object", wantErr: true},
		{name: "cyclic schema: the bot survives the call", tool: "mcp__srv__cyclic", args: `{"q":"x"}`, want: "ok:"},
		{name: "unusable tool left out", tool: "mcp__srv__broken", args: `{}`, want: `Tool "mcp__srv__broken" not found`, wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := tt.tool
			if name == "" {
				name = "mcp__srv__search"
			}
			a := newTestAgent(t, agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall(name, tt.args)), agenttest.FauxText("end")),
				agent.WithExtensions(ext), agent.WithLogger(logger))
			var names []string
			for _, spec := range a.Tools() {
				names = append(names, spec.Name)
			}
			if diff := cmp.Diff([]string{"mcp__srv__search", "mcp__srv__odd", "mcp__srv__cyclic"}, names); diff != "" {
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
		`msg="agent: tool schema not checked; calls are checked only as JSON objects" tool=mcp__srv__odd origin=mcp why="not a schema jsonschema-go reads`,
		`msg="agent: tool left out: its parameter schema is unusable" tool=mcp__srv__broken`,
		`tool=mcp__srv__cyclic origin=mcp why="not followed: its references lead back to \"#\""`,
	} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("the log does not contain %q:\n%s", want, logs.String())
		}
	}
	if strings.Contains(logs.String(), "tool=mcp__srv__search") {
		t.Errorf("the log warns about a schema jsonschema-go resolves:\n%s", logs.String())
	}
}

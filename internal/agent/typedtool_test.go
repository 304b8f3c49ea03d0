package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// searchArgs are the arguments of the test tool of TestNewTool.
type searchArgs struct {
	Query string   `json:"query" jsonschema:"What to look for."`
	Limit *int     `json:"limit,omitempty" jsonschema:"At most this many hits."`
	Tags  []string `json:"tags,omitempty"`
	Exact bool     `json:"exact,omitempty"`
}

// TestNewTool checks the schema NewTool infers (required fields, optional
// ones without null, descriptions, no other properties), that the loop
// validates calls against it and that the tool gets the decoded arguments.
func TestNewTool(t *testing.T) {
	var got []string
	tool := agent.NewTool(agent.ToolSpec{Name: "search", Description: "Search."},
		func(ctx context.Context, call *agent.Call, args searchArgs) (agent.Result, error) {
			limit := "none"
			if args.Limit != nil {
				limit = fmt.Sprint(*args.Limit)
			}
			got = append(got, fmt.Sprintf("%s limit=%s tags=%v exact=%v", args.Query, limit, args.Tags, args.Exact))
			return agent.TextResult("ok"), nil
		})
	var schema any
	if err := json.Unmarshal(tool.Spec().Parameters, &schema); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"query": map[string]any{"type": "string", "description": "What to look for."},
			"limit": map[string]any{"type": "integer", "description": "At most this many hits."},
			"tags":  map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"exact": map[string]any{"type": "boolean"},
		},
		"required":             []any{"query"},
		"additionalProperties": false,
	}
	if diff := cmp.Diff(want, schema); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}

	calls := []struct{ args, want string }{
		{`{"query":"a"}`, "ok"},
		{`{"query":"b","limit":3,"tags":["x"],"exact":true}`, "ok"},
		{`{"limit":3}`, `required: missing properties: ["query"]`},
		{`{"query":"c","limit":null}`, `has type "null", want "integer"`},
		{`{"query":"c","other":1}`, `unexpected additional properties ["other"]`},
	}
	for _, c := range calls {
		a := newTestAgent(t, agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("search", c.args)), agenttest.FauxText("end")), agent.WithTools(tool))
		s := openSession(t, a, agent.SessionOptions{})
		if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, nil); err != nil {
			t.Fatal(err)
		}
		if text := agent.TextOf(s.Messages()[2].Content); !strings.Contains(text, c.want) {
			t.Errorf("%s: result %q does not contain %q", c.args, text, c.want)
		}
	}
	if diff := cmp.Diff([]string{"a limit=none tags=[] exact=false", "b limit=3 tags=[x] exact=true"}, got); diff != "" {
		t.Errorf("decoded arguments (-want +got):\n%s", diff)
	}
}

// TestNewToolEmptyArgs checks that a tool without parameters offers an
// object with empty properties, as providers expect.
func TestNewToolEmptyArgs(t *testing.T) {
	tool := agent.NewTool(agent.ToolSpec{Name: "list"}, func(ctx context.Context, call *agent.Call, args struct{}) (agent.Result, error) {
		return agent.TextResult("ok"), nil
	})
	if diff := cmp.Diff(`{"type":"object","properties":{},"additionalProperties":false}`, string(tool.Spec().Parameters)); diff != "" {
		t.Errorf("schema (-want +got):\n%s", diff)
	}
}

// TestNewToolPanics checks the mistakes NewTool refuses when the tool is
// built, rather than when the model first calls it.
func TestNewToolPanics(t *testing.T) {
	type runArgs struct {
		Command string `json:"command"`
		Count   int    `json:"count"`
	}
	run := func(ctx context.Context, call *agent.Call, args runArgs) (agent.Result, error) {
		return agent.Result{}, nil
	}
	tests := []struct {
		name string
		spec agent.ToolSpec
		want string
	}{
		{"parameters given", agent.ToolSpec{Parameters: json.RawMessage(`{}`)}, "already has parameters"},
		{"command not an argument", agent.ToolSpec{Effects: agent.Effects{Command: "cmd"}}, `Command names "cmd", which is not a string parameter`},
		{"path not a string", agent.ToolSpec{Effects: agent.Effects{WritesPath: "count"}}, `WritesPath names "count", which is not a string parameter`},
		{"read-only runs a command", agent.ToolSpec{Effects: agent.Effects{ReadOnly: true, Command: "command"}}, "ReadOnly with a Command"},
		{"deferred nothing", agent.ToolSpec{Effects: agent.Effects{Deferred: true}}, "Deferred without a Command"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer func() {
				r := recover()
				if msg := fmt.Sprint(r); r == nil || !strings.Contains(msg, tt.want) {
					t.Errorf("panic %v, want one containing %q", r, tt.want)
				}
			}()
			tt.spec.Name = "run"
			agent.NewTool(tt.spec, run)
		})
	}
	t.Run("not a struct", func(t *testing.T) {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(fmt.Sprint(r), "not a struct") {
				t.Errorf("panic %v, want one saying the arguments are not a struct", r)
			}
		}()
		agent.NewTool(agent.ToolSpec{Name: "n"}, func(ctx context.Context, call *agent.Call, args string) (agent.Result, error) {
			return agent.Result{}, nil
		})
	})
}

// TestToolCallEventEffects checks that a tool_call handler sees the
// effects the tool declared.
func TestToolCallEventEffects(t *testing.T) {
	type runArgs struct {
		Command string `json:"command"`
	}
	fx := agent.Effects{Command: "command"}
	tool := agent.NewTool(agent.ToolSpec{Name: "run", Effects: fx}, func(ctx context.Context, call *agent.Call, args runArgs) (agent.Result, error) {
		return agent.TextResult("ran"), nil
	})
	var seen []agent.Effects
	ext := &funcExtension{name: "judge", activate: func(ctx context.Context, api *agent.API) error {
		api.OnToolCall(func(ctx context.Context, ev *agent.ToolCallEvent) error {
			seen = append(seen, ev.Effects)
			return nil
		})
		return nil
	}}
	a := newTestAgent(t, agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("run", `{"command":"true"}`)), agenttest.FauxText("end")),
		agent.WithTools(tool), agent.WithExtensions(ext))
	s := openSession(t, a, agent.SessionOptions{})
	if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, nil); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]agent.Effects{fx}, seen); diff != "" {
		t.Errorf("effects the handler saw (-want +got):\n%s", diff)
	}
}

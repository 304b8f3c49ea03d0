package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// nestedDetail is a non-JSON-shaped value inside Details.
type nestedDetail struct {
	Field string
	Inner []map[string]any
}

// TestRedactionThroughTheLoop checks every redaction point: a secret in a result,
// in nested Details, in progress reports and in error messages never
// reaches the update and end events, the tool_result handlers, the
// transcript or the next request; a handler that appends the secret is
// redacted again.
func TestRedactionThroughTheLoop(t *testing.T) {
	leaky := agenttest.NewTool("leaky", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) {
		call.Progress(agent.Result{Content: []agent.Content{agent.Text("partial " + testSecret)}, Details: map[string]any{"tail": testSecret}})
		call.Progress(agent.Result{Content: []agent.Content{agent.Text("more " + testSecret + " output")}})
		return agent.Result{
			Content: []agent.Content{agent.Text("token=" + testSecret), agent.Image("image/png", []byte{1, 2, 3})},
			Details: map[string]any{
				"plain":    testSecret,
				"nested":   map[string]any{"deeper": []any{"x" + testSecret, 42, map[string]any{"k": testSecret}}},
				"list":     []string{"a", testSecret},
				"map":      map[string]string{"v": testSecret},
				"struct":   nestedDetail{Field: testSecret, Inner: []map[string]any{{"s": testSecret}}},
				"ptr":      &nestedDetail{Field: testSecret},
				testSecret: "key holds it",
			},
		}, nil
	})
	failing := agenttest.NewTool("failing", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) {
		return agent.Result{}, errors.New("cannot use " + testSecret)
	})
	panicky := agenttest.NewTool("panicky", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) {
		panic("boom " + testSecret)
	})
	strict := agenttest.NewTool("strict", `{"type":"object","properties":{"mode":{"type":"string","enum":["a","b"]}},"required":["mode"],"additionalProperties":false}`,
		func(ctx context.Context, call *agent.Call) (agent.Result, error) { return agent.TextResult("ran"), nil })
	blocked := agenttest.NewTool("blocked", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) {
		t.Error("a blocked tool ran")
		return agent.Result{}, nil
	})

	var mu sync.Mutex
	var handlerInputs []agent.Result
	ext := &funcExtension{name: "auditor", activate: func(ctx context.Context, api *agent.API) error {
		api.OnToolCall(func(ctx context.Context, ev *agent.ToolCallEvent) error {
			if ev.ToolName == "blocked" {
				ev.Block("refused: " + testSecret)
			}
			return nil
		})
		api.OnToolResult(func(ctx context.Context, ev *agent.ToolResultEvent) error {
			mu.Lock()
			handlerInputs = append(handlerInputs, agent.CloneResult(ev.Result))
			mu.Unlock()
			ev.Result.Content = append(ev.Result.Content, agent.Text("handler says "+testSecret))
			if ev.Result.Details == nil {
				ev.Result.Details = map[string]any{}
			}
			ev.Result.Details["added"] = []any{testSecret}
			return nil
		})
		return nil
	}}

	faux := agenttest.NewFauxProvider(
		agenttest.FauxToolCalls(
			agenttest.FauxCall("leaky", `{}`),
			agenttest.FauxCall("failing", `{}`),
			agenttest.FauxCall("panicky", `{}`),
			agenttest.FauxCall("strict", `{"mode":"c"}`),
			agenttest.FauxCall("strict", `{"mode":"a","extra":1}`),
			agenttest.FauxCall("blocked", `{}`),
			agenttest.FauxCall("missing", `{}`),
		),
		agenttest.FauxText("done"),
	)
	dir := t.TempDir()
	a := newTestAgent(t, faux, agent.WithSessionDir(dir), agent.WithTools(leaky, failing, panicky, strict, blocked), agent.WithExtensions(ext))
	s := openSession(t, a, agent.SessionOptions{ID: "redact"})
	var log eventLog
	res, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, log.add)
	if err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	if res.Text != "done" {
		t.Errorf("turn text = %q, want done", res.Text)
	}

	updates, ends := 0, 0
	for _, ev := range log.all() {
		switch ev.Kind {
		case agent.EventToolUpdate:
			updates++
		case agent.EventToolEnd:
			ends++
			if !strings.Contains(agent.TextOf(ev.Result.Content), redactor.Token) {
				t.Errorf("end event of %s holds no redaction token", ev.ToolName)
			}
		}
		if ev.Kind == agent.EventToolUpdate || ev.Kind == agent.EventToolEnd {
			if jsonLeaks(t, ev.Result) {
				t.Errorf("%s event of %s holds the secret", ev.Kind, ev.ToolName)
			}
		}
		if ev.Err != nil && leaks(ev.Err.Error()) {
			t.Errorf("%s event error holds the secret", ev.Kind)
		}
	}
	if updates != 2 || ends != 7 {
		t.Errorf("got %d update and %d end events, want 2 and 7", updates, ends)
	}
	mu.Lock()
	if len(handlerInputs) != 7 {
		t.Errorf("tool_result handler saw %d results, want 7", len(handlerInputs))
	}
	for i, r := range handlerInputs {
		if jsonLeaks(t, r) {
			t.Errorf("tool_result handler input %d holds the secret", i)
		}
	}
	mu.Unlock()

	data, err := os.ReadFile(filepath.Join(dir, "redact.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if leaks(string(data)) {
		t.Error("the transcript holds the secret")
	}
	if !strings.Contains(string(data), redactor.Token) {
		t.Error("the transcript holds no redaction token")
	}
	reqs := faux.Requests()
	if len(reqs) != 2 {
		t.Fatalf("provider got %d requests, want 2", len(reqs))
	}
	for i, m := range reqs[1].Messages {
		if m.Role == agent.RoleTool && jsonLeaks(t, m) {
			t.Errorf("next request: tool message %d (%s) holds the secret", i, m.ToolName)
		}
	}
	// The image survived untouched.
	toolMsg := reqs[1].Messages[2]
	if len(toolMsg.Content) < 2 || toolMsg.Content[1].Type != agent.ImageContent || len(toolMsg.Content[1].Data) != 3 {
		t.Errorf("the leaky tool's image did not survive: %+v", toolMsg.Content)
	}
	wantErrors := map[string]bool{"failing": true, "panicky": true, "strict": true, "blocked": true, "missing": true}
	for _, m := range reqs[1].Messages {
		if m.Role == agent.RoleTool && wantErrors[m.ToolName] && !m.IsError {
			t.Errorf("tool message of %s is not an error", m.ToolName)
		}
	}
}

// TestRedactValue checks the Details walk on every shape it handles.
func TestRedactValue(t *testing.T) {
	red := redactor.New([]string{testSecret})
	tests := []struct {
		name string
		in   any
	}{
		{"string", "a " + testSecret},
		{"slice of any", []any{1, testSecret, []any{testSecret}}},
		{"strings", []string{testSecret}},
		{"map of strings", map[string]string{testSecret: testSecret}},
		{"struct", nestedDetail{Field: testSecret}},
		{"pointer", &nestedDetail{Field: testSecret}},
		{"error", errors.New(testSecret)},
		{"bytes", []byte(testSecret)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := agent.RedactValue(red.Redact, tt.in)
			if jsonLeaks(t, got) {
				t.Errorf("redactValue(%s) still holds the secret", tt.name)
			}
		})
	}
}

// TestTurnErrorIsRedacted checks that a provider error echoing a secret
// reaches neither the error event nor the returned error, and that
// errors.Is still sees through the redaction.
func TestTurnErrorIsRedacted(t *testing.T) {
	faux := agenttest.NewFauxProvider(agenttest.FauxError(&agent.ProviderError{StatusCode: 400, Message: "bad input near " + testSecret, Code: "context_length_exceeded"}))
	a := newTestAgent(t, faux)
	s := openSession(t, a, agent.SessionOptions{})
	var log eventLog
	_, err := s.Prompt(context.Background(), []agent.Content{agent.Text("hi")}, log.add)
	if err == nil {
		t.Fatal("Prompt succeeded, want an error")
	}
	if leaks(err.Error()) {
		t.Error("the returned error holds the secret")
	}
	if !errors.Is(err, agent.ErrContextTooLong) {
		t.Error("errors.Is(err, ErrContextTooLong) = false")
	}
	var pe *agent.ProviderError
	if !errors.As(err, &pe) || pe.StatusCode != 400 || leaks(pe.Message) {
		t.Errorf("errors.As gave %v (status %d); want a redacted 400", pe != nil, statusOf(pe))
	}
	sawError := false
	for _, ev := range log.all() {
		if ev.Kind == agent.EventError {
			sawError = true
			if leaks(ev.Err.Error()) {
				t.Error("the error event holds the secret")
			}
		}
	}
	if !sawError {
		t.Error("no error event")
	}
	kinds := kindsOf(log.all())
	if kinds[0] != agent.EventTurnStart || kinds[len(kinds)-1] != agent.EventTurnEnd {
		t.Errorf("events = %v, want turn_start first and turn_end last", kinds)
	}
}

func statusOf(pe *agent.ProviderError) int {
	if pe == nil {
		return 0
	}
	return pe.StatusCode
}

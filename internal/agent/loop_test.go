package agent_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// ignoreTime drops message times from comparisons.
var ignoreTime = cmpopts.IgnoreFields(agent.Message{}, "Time")

// TestTurnWithTools runs text, a tool call and an answer, checking the
// events, the history and what the model was sent.
func TestTurnWithTools(t *testing.T) {
	echo := agenttest.NewTool("echo", `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
		func(ctx context.Context, call *agent.Call) (agent.Result, error) {
			return agent.TextResult("echo: " + string(call.Arguments)), nil
		})
	faux := agenttest.NewFauxProvider(
		agenttest.FauxResponse{Text: "let me check", ToolCalls: []agent.ToolCall{{ID: "c1", Name: "echo", Arguments: `{"text":"hi"}`}}, Usage: agent.Usage{TotalTokens: 10}},
		agenttest.FauxResponse{Text: "all done", Usage: agent.Usage{TotalTokens: 20}},
	)
	a := newTestAgent(t, faux, agent.WithTools(echo), agent.WithSystemPrompt(func(info agent.SessionInfo) string {
		return "you are " + info.ID + " in " + info.TimeZone + " on " + info.Model
	}))
	s := openSession(t, a, agent.SessionOptions{TimeZone: "Europe/Paris"})
	var log eventLog
	res, err := s.Prompt(context.Background(), []agent.Content{agent.Text("hello")}, log.add)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(agent.TurnResult{Text: "all done", Steps: 2, Usage: agent.Usage{TotalTokens: 20}, Total: agent.Usage{TotalTokens: 30}, ToolCalls: 1}, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	// The text stream's redactor decides where deltas break (it holds
	// back what could begin a secret), so a run of deltas counts as one.
	events := joinDeltas(log.all())
	wantKinds := []agent.EventKind{agent.EventTurnStart, agent.EventTextDelta, agent.EventToolStart, agent.EventToolEnd, agent.EventTextDelta, agent.EventTurnEnd}
	if diff := cmp.Diff(wantKinds, kindsOf(events)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if len(events) == len(wantKinds) && (events[1].Text != "let me check" || events[4].Text != "all done") {
		t.Errorf("streamed texts = %q, %q, want the two answers", events[1].Text, events[4].Text)
	}
	want := []agent.Message{
		{Role: agent.RoleUser, Content: []agent.Content{agent.Text("hello")}},
		{Role: agent.RoleAssistant, Content: []agent.Content{agent.Text("let me check")}, ToolCalls: []agent.ToolCall{{ID: "c1", Name: "echo", Arguments: `{"text":"hi"}`}}},
		{Role: agent.RoleTool, ToolCallID: "c1", ToolName: "echo", Content: []agent.Content{agent.Text(`echo: {"text":"hi"}`)}},
		{Role: agent.RoleAssistant, Content: []agent.Content{agent.Text("all done")}},
	}
	if diff := cmp.Diff(want, s.Messages(), ignoreTime); diff != "" {
		t.Errorf("messages (-want +got):\n%s", diff)
	}
	reqs := faux.Requests()
	if len(reqs) != 2 || reqs[0].System != "you are chat-1 in Europe/Paris on test-model" || reqs[0].Model != "test-model" {
		t.Fatalf("requests: %d, first system %q", len(reqs), reqs[0].System)
	}
	if len(reqs[1].Messages) != 3 || len(reqs[0].Tools) != 1 {
		t.Errorf("second request has %d messages and first %d tools, want 3 and 1", len(reqs[1].Messages), len(reqs[0].Tools))
	}
	if s.LastUsage().TotalTokens != 20 {
		t.Errorf("LastUsage = %+v", s.LastUsage())
	}
}

// TestToolErrorResults checks the error paths that become results.
func TestToolErrorResults(t *testing.T) {
	schema := `{"type":"object","properties":{"n":{"type":"integer"}},"required":["n"],"additionalProperties":false}`
	tool := agenttest.NewTool("count", schema, func(ctx context.Context, call *agent.Call) (agent.Result, error) { return agent.TextResult("ok"), nil })
	tests := []struct {
		name string
		call agent.ToolCall
		want string
	}{
		{"valid", agenttest.FauxCall("count", `{"n":3}`), "ok"},
		{"empty arguments", agenttest.FauxCall("count", ``), `required: missing properties: ["n"]`},
		{"bad json", agenttest.FauxCall("count", `{"n":`), "not valid JSON"},
		{"wrong type", agenttest.FauxCall("count", `{"n":"3"}`), `has type "string", want "integer"`},
		{"fraction", agenttest.FauxCall("count", `{"n":1.5}`), `want "integer"`},
		{"extra", agenttest.FauxCall("count", `{"n":1,"m":2}`), `unexpected additional properties ["m"]`},
		{"not an object", agenttest.FauxCall("count", `[1]`), "must be a JSON object"},
		{"unknown tool", agenttest.FauxCall("nope", `{}`), `Tool "nope" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newTestAgent(t, agenttest.NewFauxProvider(agenttest.FauxToolCalls(tt.call), agenttest.FauxText("end")), agent.WithTools(tool))
			s := openSession(t, a, agent.SessionOptions{})
			if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, nil); err != nil {
				t.Fatal(err)
			}
			msgs := s.Messages()
			got := msgs[2]
			if !strings.Contains(agent.TextOf(got.Content), tt.want) {
				t.Errorf("result %q does not contain %q", agent.TextOf(got.Content), tt.want)
			}
			if got.IsError != (tt.name != "valid") {
				t.Errorf("IsError = %v", got.IsError)
			}
		})
	}
}

// TestStepLimit checks that a model that keeps calling tools is stopped
// with a clear message and a consistent history.
func TestStepLimit(t *testing.T) {
	tool := agenttest.NewTool("loop", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) {
		return agent.TextResult("again"), nil
	})
	faux := agenttest.NewFauxProvider()
	faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		return agent.Response{ToolCalls: []agent.ToolCall{{ID: "x", Name: "loop", Arguments: "{}"}}}, nil
	})
	a := newTestAgent(t, faux, agent.WithTools(tool), agent.WithMaxSteps(3))
	s := openSession(t, a, agent.SessionOptions{})
	res, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.StepLimit || res.Steps != 3 || !strings.Contains(res.Text, "limit") {
		t.Errorf("result = %+v, want the step limit after 3 steps", res)
	}
	msgs := s.Messages()
	last := msgs[len(msgs)-1]
	if last.Role != agent.RoleAssistant || agent.TextOf(last.Content) != res.Text || len(msgs) != 1+3*2+1 {
		t.Errorf("history has %d messages ending with a %s message", len(msgs), last.Role)
	}
	if len(faux.Requests()) != 3 {
		t.Errorf("provider got %d requests, want 3", len(faux.Requests()))
	}
}

// TestCancelDuringTool cancels a turn while a tool runs: every call gets a
// result, the transcript reloads, and the next turn works.
func TestCancelDuringTool(t *testing.T) {
	started := make(chan struct{})
	slow := agenttest.NewTool("slow", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) {
		close(started)
		<-ctx.Done()
		return agent.Result{}, ctx.Err()
	})
	never := agenttest.NewTool("never", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) {
		t.Error("a call after the cancelled one ran")
		return agent.Result{}, nil
	})
	faux := agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("slow", "{}"), agenttest.FauxCall("never", "{}")))
	dir := t.TempDir()
	a := newTestAgent(t, faux, agent.WithTools(slow, never), agent.WithSessionDir(dir))
	s := openSession(t, a, agent.SessionOptions{ID: "cancel"})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	var log eventLog
	_, err := s.Prompt(ctx, []agent.Content{agent.Text("go")}, log.add)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Prompt = %v, want context.Canceled", err)
	}
	kinds := kindsOf(log.all())
	if kinds[len(kinds)-1] != agent.EventTurnEnd || kinds[len(kinds)-2] != agent.EventError {
		t.Errorf("events end with %v, want error then turn_end", kinds[len(kinds)-2:])
	}
	msgs := s.Messages()
	for _, m := range msgs[2:] {
		if m.Role != agent.RoleTool || agent.TextOf(m.Content) != agent.AbortedText || !m.IsError {
			t.Errorf("message %+v, want an aborted tool result", m)
		}
	}
	if len(msgs) != 4 {
		t.Fatalf("history has %d messages, want 4", len(msgs))
	}
	s.Close()

	a2 := newTestAgent(t, faux, agent.WithTools(slow, never), agent.WithSessionDir(dir))
	s2 := openSession(t, a2, agent.SessionOptions{ID: "cancel"})
	if diff := cmp.Diff(msgs, s2.Messages(), ignoreTime); diff != "" {
		t.Errorf("reloaded history (-want +got):\n%s", diff)
	}
	faux.Enqueue(agenttest.FauxText("fine again"))
	res, err := s2.Prompt(context.Background(), []agent.Content{agent.Text("again")}, nil)
	if err != nil || res.Text != "fine again" {
		t.Fatalf("next turn = %q, %v", res.Text, err)
	}
	reqs := faux.Requests()
	if n := len(reqs[len(reqs)-1].Messages); n != 5 {
		t.Errorf("next request has %d messages, want 5", n)
	}
}

// TestCancelIgnoredByTool checks that a tool that ignores cancellation
// does not hang the turn.
func TestCancelIgnoredByTool(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	started := make(chan struct{})
	stubborn := agenttest.NewTool("stubborn", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) {
		close(started)
		<-release
		return agent.TextResult("late"), nil
	})
	a := newTestAgent(t, agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("stubborn", "{}"))), agent.WithTools(stubborn), agent.WithAbortGrace(50*time.Millisecond))
	s := openSession(t, a, agent.SessionOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	if _, err := s.Prompt(ctx, []agent.Content{agent.Text("go")}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Prompt = %v, want context.Canceled", err)
	}
	if got := agent.TextOf(s.Messages()[2].Content); got != agent.AbortedText {
		t.Errorf("result = %q, want %q", got, agent.AbortedText)
	}
}

// TestCancelDuringModel cancels while the model streams.
func TestCancelDuringModel(t *testing.T) {
	faux := agenttest.NewFauxProvider(agenttest.FauxFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		onText("partial")
		<-ctx.Done()
		return agent.Response{}, ctx.Err()
	}))
	a := newTestAgent(t, faux)
	s := openSession(t, a, agent.SessionOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Prompt(ctx, []agent.Content{agent.Text("go")}, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Prompt = %v, want DeadlineExceeded", err)
	}
	if n := len(s.Messages()); n != 1 {
		t.Errorf("history has %d messages, want only the user's", n)
	}
}

// TestTurnsAreSerialized checks that a second Prompt waits for the first.
func TestTurnsAreSerialized(t *testing.T) {
	gate := make(chan struct{})
	faux := agenttest.NewFauxProvider(
		agenttest.FauxFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
			<-gate
			return agent.Response{Text: "first"}, nil
		}),
		agenttest.FauxText("second"),
	)
	a := newTestAgent(t, faux)
	s := openSession(t, a, agent.SessionOptions{})
	done := make(chan error, 1)
	go func() {
		_, err := s.Prompt(context.Background(), []agent.Content{agent.Text("1")}, nil)
		done <- err
	}()
	for len(faux.Requests()) == 0 {
		time.Sleep(time.Millisecond)
	}
	second := make(chan agent.TurnResult, 1)
	go func() {
		res, _ := s.Prompt(context.Background(), []agent.Content{agent.Text("2")}, nil)
		second <- res
	}()
	select {
	case <-second:
		t.Fatal("the second turn ran while the first was running")
	case <-time.After(50 * time.Millisecond):
	}
	close(gate)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if res := <-second; res.Text != "second" {
		t.Errorf("second turn = %q", res.Text)
	}
}

// TestSessionIDs checks the id validation.
func TestSessionIDs(t *testing.T) {
	a := newTestAgent(t, agenttest.NewFauxProvider(), agent.WithSessionDir(t.TempDir()))
	for _, id := range []string{"", ".", "..", "../x", "a/b", `a\b`, ".hidden", "a b", strings.Repeat("x", 129)} {
		if _, err := a.Session(context.Background(), agent.SessionOptions{ID: id}); err == nil {
			t.Errorf("Session(%q) succeeded", id)
		}
	}
	for _, id := range []string{"chat-100123", "-100123", "a.b_c"} {
		if _, err := a.Session(context.Background(), agent.SessionOptions{ID: id}); err != nil {
			t.Errorf("Session(%q) = %v", id, err)
		}
	}
}

// TestTimeZones checks the zone resolution.
func TestTimeZones(t *testing.T) {
	tests := []struct {
		name, deflt, session, want string
	}{
		{"session", "Asia/Tokyo", "Europe/Berlin", "Europe/Berlin"},
		{"default", "Asia/Tokyo", "", "Asia/Tokyo"},
		{"local", "", "Local", ""},
		{"unknown falls back", "Asia/Tokyo", "Mars/Olympus", "Asia/Tokyo"},
		{"none", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newTestAgent(t, agenttest.NewFauxProvider(), agent.WithDefaultTimeZone(tt.deflt))
			s := openSession(t, a, agent.SessionOptions{TimeZone: tt.session})
			if got := s.TimeZone(); got != tt.want {
				t.Errorf("TimeZone = %q, want %q", got, tt.want)
			}
			pc, err := s.ToolContext().PrepareProcess(context.Background(), spawnRequest())
			if err != nil {
				t.Fatal(err)
			}
			if got := pc.Env["TZ"]; got != tt.want {
				t.Errorf("child TZ = %q, want %q", got, tt.want)
			}
		})
	}
	a := newTestAgent(t, agenttest.NewFauxProvider())
	s := openSession(t, a, agent.SessionOptions{})
	if err := s.SetTimeZone("Nowhere/Special"); err == nil {
		t.Error("SetTimeZone accepted an unknown zone")
	}
	if err := s.SetTimeZone("America/Chicago"); err != nil || s.TimeZone() != "America/Chicago" {
		t.Errorf("SetTimeZone = %v, zone %q", err, s.TimeZone())
	}
}

// TestCloseFiresHandlers checks session close handlers and ErrSessionClosed.
func TestCloseFiresHandlers(t *testing.T) {
	var closed []string
	ext := &funcExtension{name: "mcp", activate: func(ctx context.Context, api *agent.API) error {
		api.OnSessionClose(func(id string) { closed = append(closed, id) })
		return nil
	}}
	dir := t.TempDir()
	a := newTestAgent(t, agenttest.NewFauxProvider(agenttest.FauxText("hi")), agent.WithExtensions(ext), agent.WithSessionDir(dir))
	s := openSession(t, a, agent.SessionOptions{ID: "c"})
	if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("x")}, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Close()
	if diff := cmp.Diff([]string{"c"}, closed); diff != "" {
		t.Error(diff)
	}
	if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("x")}, nil); !errors.Is(err, agent.ErrSessionClosed) {
		t.Errorf("Prompt after Close = %v", err)
	}
	s2 := openSession(t, a, agent.SessionOptions{ID: "c"})
	if s2 == s || len(s2.Messages()) != 2 {
		t.Errorf("reopened session has %d messages", len(s2.Messages()))
	}
	if _, err := os.Stat(filepath.Join(dir, "c.jsonl")); err != nil {
		t.Error(err)
	}
}

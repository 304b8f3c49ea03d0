package agent

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
)

// ignoreTime drops message times from comparisons.
var ignoreTime = cmpopts.IgnoreFields(Message{}, "Time")

// TestTurnWithTools runs text, a tool call and an answer, checking the
// events, the history and what the model was sent.
func TestTurnWithTools(t *testing.T) {
	echo := newTool("echo", `{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`,
		func(ctx context.Context, call *Call) (Result, error) {
			return TextResult("echo: " + string(call.Arguments)), nil
		})
	faux := NewFauxProvider(
		FauxResponse{Text: "let me check", ToolCalls: []ToolCall{{ID: "c1", Name: "echo", Arguments: `{"text":"hi"}`}}, Usage: Usage{TotalTokens: 10}},
		FauxResponse{Text: "all done", Usage: Usage{TotalTokens: 20}},
	)
	a := newTestAgent(t, faux, WithTools(echo), WithSystemPrompt(func(info SessionInfo) string {
		return "you are " + info.ID + " in " + info.TimeZone + " on " + info.Model
	}))
	s := openSession(t, a, SessionOptions{TimeZone: "Europe/Paris"})
	var log eventLog
	res, err := s.Prompt(context.Background(), []Content{Text("hello")}, log.add)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(TurnResult{Text: "all done", Steps: 2, Usage: Usage{TotalTokens: 20}}, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}
	wantKinds := []EventKind{EventTurnStart, EventTextDelta, EventTextDelta, EventTextDelta, EventToolStart, EventToolEnd, EventTextDelta, EventTextDelta, EventTurnEnd}
	if diff := cmp.Diff(wantKinds, kindsOf(log.all())); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	want := []Message{
		{Role: RoleUser, Content: []Content{Text("hello")}},
		{Role: RoleAssistant, Content: []Content{Text("let me check")}, ToolCalls: []ToolCall{{ID: "c1", Name: "echo", Arguments: `{"text":"hi"}`}}},
		{Role: RoleTool, ToolCallID: "c1", ToolName: "echo", Content: []Content{Text(`echo: {"text":"hi"}`)}},
		{Role: RoleAssistant, Content: []Content{Text("all done")}},
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
	tool := newTool("count", schema, func(ctx context.Context, call *Call) (Result, error) { return TextResult("ok"), nil })
	tests := []struct {
		name string
		call ToolCall
		want string
	}{
		{"valid", FauxCall("count", `{"n":3}`), "ok"},
		{"empty arguments", FauxCall("count", ``), `missing required property "n"`},
		{"bad json", FauxCall("count", `{"n":`), "not valid JSON"},
		{"wrong type", FauxCall("count", `{"n":"3"}`), "expected integer, got string"},
		{"fraction", FauxCall("count", `{"n":1.5}`), "expected integer"},
		{"extra", FauxCall("count", `{"n":1,"m":2}`), `unknown property "m"`},
		{"not an object", FauxCall("count", `[1]`), "must be a JSON object"},
		{"unknown tool", FauxCall("nope", `{}`), `Tool "nope" not found`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := newTestAgent(t, NewFauxProvider(FauxToolCalls(tt.call), FauxText("end")), WithTools(tool))
			s := openSession(t, a, SessionOptions{})
			if _, err := s.Prompt(context.Background(), []Content{Text("go")}, nil); err != nil {
				t.Fatal(err)
			}
			msgs := s.Messages()
			got := msgs[2]
			if !strings.Contains(TextOf(got.Content), tt.want) {
				t.Errorf("result %q does not contain %q", TextOf(got.Content), tt.want)
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
	tool := newTool("loop", "", func(ctx context.Context, call *Call) (Result, error) { return TextResult("again"), nil })
	faux := NewFauxProvider()
	faux.Handle(func(ctx context.Context, req Request, onText func(string)) (Response, error) {
		return Response{ToolCalls: []ToolCall{{ID: "x", Name: "loop", Arguments: "{}"}}}, nil
	})
	a := newTestAgent(t, faux, WithTools(tool), WithMaxSteps(3))
	s := openSession(t, a, SessionOptions{})
	res, err := s.Prompt(context.Background(), []Content{Text("go")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.StepLimit || res.Steps != 3 || !strings.Contains(res.Text, "limit") {
		t.Errorf("result = %+v, want the step limit after 3 steps", res)
	}
	msgs := s.Messages()
	last := msgs[len(msgs)-1]
	if last.Role != RoleAssistant || TextOf(last.Content) != res.Text || len(msgs) != 1+3*2+1 {
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
	slow := newTool("slow", "", func(ctx context.Context, call *Call) (Result, error) {
		close(started)
		<-ctx.Done()
		return Result{}, ctx.Err()
	})
	never := newTool("never", "", func(ctx context.Context, call *Call) (Result, error) {
		t.Error("a call after the cancelled one ran")
		return Result{}, nil
	})
	faux := NewFauxProvider(FauxToolCalls(FauxCall("slow", "{}"), FauxCall("never", "{}")))
	dir := t.TempDir()
	a := newTestAgent(t, faux, WithTools(slow, never), WithSessionDir(dir))
	s := openSession(t, a, SessionOptions{ID: "cancel"})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-started
		cancel()
	}()
	var log eventLog
	_, err := s.Prompt(ctx, []Content{Text("go")}, log.add)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Prompt = %v, want context.Canceled", err)
	}
	kinds := kindsOf(log.all())
	if kinds[len(kinds)-1] != EventTurnEnd || kinds[len(kinds)-2] != EventError {
		t.Errorf("events end with %v, want error then turn_end", kinds[len(kinds)-2:])
	}
	msgs := s.Messages()
	for _, m := range msgs[2:] {
		if m.Role != RoleTool || TextOf(m.Content) != abortedText || !m.IsError {
			t.Errorf("message %+v, want an aborted tool result", m)
		}
	}
	if len(msgs) != 4 {
		t.Fatalf("history has %d messages, want 4", len(msgs))
	}
	s.Close()

	a2 := newTestAgent(t, faux, WithTools(slow, never), WithSessionDir(dir))
	s2 := openSession(t, a2, SessionOptions{ID: "cancel"})
	if diff := cmp.Diff(msgs, s2.Messages(), ignoreTime); diff != "" {
		t.Errorf("reloaded history (-want +got):\n%s", diff)
	}
	faux.Enqueue(FauxText("fine again"))
	res, err := s2.Prompt(context.Background(), []Content{Text("again")}, nil)
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
	stubborn := newTool("stubborn", "", func(ctx context.Context, call *Call) (Result, error) {
		close(started)
		<-release
		return TextResult("late"), nil
	})
	a := newTestAgent(t, NewFauxProvider(FauxToolCalls(FauxCall("stubborn", "{}"))), WithTools(stubborn), WithAbortGrace(50*time.Millisecond))
	s := openSession(t, a, SessionOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	if _, err := s.Prompt(ctx, []Content{Text("go")}, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("Prompt = %v, want context.Canceled", err)
	}
	if got := TextOf(s.Messages()[2].Content); got != abortedText {
		t.Errorf("result = %q, want %q", got, abortedText)
	}
}

// TestCancelDuringModel cancels while the model streams.
func TestCancelDuringModel(t *testing.T) {
	faux := NewFauxProvider(FauxFunc(func(ctx context.Context, req Request, onText func(string)) (Response, error) {
		onText("partial")
		<-ctx.Done()
		return Response{}, ctx.Err()
	}))
	a := newTestAgent(t, faux)
	s := openSession(t, a, SessionOptions{})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := s.Prompt(ctx, []Content{Text("go")}, nil); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Prompt = %v, want DeadlineExceeded", err)
	}
	if n := len(s.Messages()); n != 1 {
		t.Errorf("history has %d messages, want only the user's", n)
	}
}

// TestTurnsAreSerialized checks that a second Prompt waits for the first.
func TestTurnsAreSerialized(t *testing.T) {
	gate := make(chan struct{})
	faux := NewFauxProvider(
		FauxFunc(func(ctx context.Context, req Request, onText func(string)) (Response, error) {
			<-gate
			return Response{Text: "first"}, nil
		}),
		FauxText("second"),
	)
	a := newTestAgent(t, faux)
	s := openSession(t, a, SessionOptions{})
	done := make(chan error, 1)
	go func() {
		_, err := s.Prompt(context.Background(), []Content{Text("1")}, nil)
		done <- err
	}()
	for len(faux.Requests()) == 0 {
		time.Sleep(time.Millisecond)
	}
	second := make(chan TurnResult, 1)
	go func() {
		res, _ := s.Prompt(context.Background(), []Content{Text("2")}, nil)
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
	a := newTestAgent(t, NewFauxProvider(), WithSessionDir(t.TempDir()))
	for _, id := range []string{"", ".", "..", "../x", "a/b", `a\b`, ".hidden", "a b", strings.Repeat("x", 129)} {
		if _, err := a.Session(context.Background(), SessionOptions{ID: id}); err == nil {
			t.Errorf("Session(%q) succeeded", id)
		}
	}
	for _, id := range []string{"chat-100123", "-100123", "a.b_c"} {
		if _, err := a.Session(context.Background(), SessionOptions{ID: id}); err != nil {
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
			a := newTestAgent(t, NewFauxProvider(), WithDefaultTimeZone(tt.deflt))
			s := openSession(t, a, SessionOptions{TimeZone: tt.session})
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
	a := newTestAgent(t, NewFauxProvider())
	s := openSession(t, a, SessionOptions{})
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
	ext := &funcExtension{name: "mcp", activate: func(ctx context.Context, api *API) error {
		api.OnSessionClose(func(id string) { closed = append(closed, id) })
		return nil
	}}
	dir := t.TempDir()
	a := newTestAgent(t, NewFauxProvider(FauxText("hi")), WithExtensions(ext), WithSessionDir(dir))
	s := openSession(t, a, SessionOptions{ID: "c"})
	if _, err := s.Prompt(context.Background(), []Content{Text("x")}, nil); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s.Close()
	if diff := cmp.Diff([]string{"c"}, closed); diff != "" {
		t.Error(diff)
	}
	if _, err := s.Prompt(context.Background(), []Content{Text("x")}, nil); !errors.Is(err, ErrSessionClosed) {
		t.Errorf("Prompt after Close = %v", err)
	}
	s2 := openSession(t, a, SessionOptions{ID: "c"})
	if s2 == s || len(s2.Messages()) != 2 {
		t.Errorf("reopened session has %d messages", len(s2.Messages()))
	}
	if _, err := os.Stat(filepath.Join(dir, "c.jsonl")); err != nil {
		t.Error(err)
	}
}

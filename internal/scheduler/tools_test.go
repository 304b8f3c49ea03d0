package scheduler

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// callTool runs the scheduler's tool name as a call from the chat scope.
func (e *env) callTool(t *testing.T, name, scope, args string) agent.Result {
	t.Helper()
	tools := make(map[string]agent.Tool)
	for _, tool := range e.s.tools() {
		tools[tool.Spec().Name] = tool
	}
	res, err := tools[name].Execute(t.Context(), &agent.Call{
		ID:        "call-1",
		Arguments: json.RawMessage(args),
		Context:   &agent.ToolContext{Scope: scope, Workspace: e.workspace},
	})
	if err != nil {
		t.Fatalf("%s returned an error instead of an error result: %v", name, err)
	}
	return res
}

// TestToolsRejectBadInput checks the documented messages: a bad schedule
// lists the accepted forms with an example of each.
func TestToolsRejectBadInput(t *testing.T) {
	forms := []string{"Accepted schedules", `"0 9 * * 1"`, `"@daily"`, `"@every 30m"`, `"2026-12-01T09:00:00+01:00"`, `"2026-12-01 09:00"`}
	tests := []struct {
		name  string
		tool  string
		scope string
		args  string
		want  []string
	}{
		{"unknown form", "schedule_job", "chat-a", `{"schedule": "every monday", "prompt": "p"}`, append([]string{`invalid schedule "every monday"`}, forms...)},
		{"bad cron", "schedule_job", "chat-a", `{"schedule": "0 25 * * *", "prompt": "p"}`, append([]string{`invalid schedule "0 25 * * *"`}, forms...)},
		{"below the floor", "schedule_job", "chat-a", `{"schedule": "@every 10s", "prompt": "p"}`, append([]string{"fires every 10s, more often than the minimum of 1m0s"}, forms...)},
		{"past time", "schedule_job", "chat-a", `{"schedule": "2020-01-01 09:00", "prompt": "p"}`, append([]string{"that time has passed"}, forms...)},
		{"blank prompt", "schedule_job", "chat-a", `{"schedule": "@daily", "prompt": "   "}`, []string{"the prompt is empty"}},
		{"two-line name", "schedule_job", "chat-a", `{"schedule": "@daily", "prompt": "p", "name": "a\nb"}`, []string{"the name must be one line"}},
		{"no chat", "schedule_job", "", `{"schedule": "@daily", "prompt": "p"}`, []string{errNoChat}},
		{"list without chat", "list_jobs", "", `{}`, []string{errNoChat}},
		{"cancel unknown", "cancel_job", "chat-a", `{"id": "deadbeef"}`, []string{`This chat has no job "deadbeef"; list_jobs shows its jobs.`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, setup{})
			res := e.callTool(t, tt.tool, tt.scope, tt.args)
			text := agent.TextOf(res.Content)
			if !res.IsError {
				t.Errorf("not an error result: %q", text)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("result %q lacks %q", text, w)
				}
			}
			if jobs := e.s.All(); len(jobs) != 0 {
				t.Errorf("a refused call left %d job(s)", len(jobs))
			}
		})
	}
}

// TestToolsScheduleListCancel runs the three tools for two chats: each
// sees and cancels only its own jobs.
func TestToolsScheduleListCancel(t *testing.T) {
	e := newEnv(t, setup{})
	res := e.callTool(t, "schedule_job", "chat-a", `{"schedule": "0 9 * * 1", "prompt": "Plan the week", "name": "weekly"}`)
	if res.IsError {
		t.Fatalf("schedule_job: %s", agent.TextOf(res.Content))
	}
	id, _ := res.Details["id"].(string)
	if text := agent.TextOf(res.Content); !strings.HasPrefix(text, "Scheduled prompt job "+id+` ("weekly"): 0 9 * * 1; next run Mon `) || !strings.Contains(text, "09:00 CE") {
		t.Errorf("schedule_job said %q", text)
	}
	if text := agent.TextOf(e.callTool(t, "list_jobs", "chat-a", `{}`).Content); !strings.Contains(text, id) || !strings.Contains(text, "Plan the week") {
		t.Errorf("chat-a's list %q lacks its job", text)
	}
	if text := agent.TextOf(e.callTool(t, "list_jobs", "chat-b", `{}`).Content); text != "This chat has no scheduled jobs." {
		t.Errorf("chat-b's list: %q", text)
	}
	if res := e.callTool(t, "cancel_job", "chat-b", `{"id": "`+id+`"}`); !res.IsError || !strings.Contains(agent.TextOf(res.Content), "This chat has no job") {
		t.Errorf("chat-b cancelling chat-a's job: %q", agent.TextOf(res.Content))
	}
	if res := e.callTool(t, "cancel_job", "chat-a", `{"id": "`+id+`"}`); res.IsError {
		t.Errorf("cancel_job: %q", agent.TextOf(res.Content))
	}
	if jobs := e.s.All(); len(jobs) != 0 {
		t.Errorf("%d job(s) left after the cancel", len(jobs))
	}
}

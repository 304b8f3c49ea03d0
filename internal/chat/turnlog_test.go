package chat

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/logtest"
)

// TestOneInfoLinePerTurn runs a turn with a tool call and checks the log:
// one Info line for the turn and one for the call, with their fields, and
// neither the prompt, the answer nor the tool's output on any line at any
// level.
func TestOneInfoLinePerTurn(t *testing.T) {
	const (
		prompt = "PROMPT-WORDS-7f3a please run it"
		output = "OUTPUT-WORDS-91c2"
		answer = "ANSWER-WORDS-5d0e all done"
	)
	faux := agenttest.NewFauxProvider(
		agenttest.FauxResponse{ToolCalls: []agent.ToolCall{agenttest.FauxCall("bash", `{"command":"echo `+output+`; exit 3"}`)},
			Usage: agent.Usage{PromptTokens: 100, CompletionTokens: 10, CachedTokens: 60}},
		agenttest.FauxResponse{Text: answer, Usage: agent.Usage{PromptTokens: 150, CompletionTokens: 20, CachedTokens: 100}},
	)
	rec := logtest.New()
	logger := rec.Logger()
	h := newHarness(t, harnessConfig{provider: faux, opts: []Option{WithLogger(logger)}, agentOpts: []agent.Option{agent.WithLogger(logger)}})
	h.tg.SendText(userID, userID, prompt)
	h.waitText(userID, "ANSWER-WORDS-5d0e")
	turn := rec.Wait(t, "the turn's line", func(r logtest.Record) bool { return r.Message == "turn" })

	infoOf := func(msg string) []logtest.Record {
		return rec.Find(func(r logtest.Record) bool { return r.Level == slog.LevelInfo && r.Message == msg })
	}
	if n := len(infoOf("turn")); n != 1 {
		t.Errorf("%d Info lines for the turn, want 1", n)
	}
	want := map[string]string{
		"scope": "1001", "kind": "message", "model": "test-model",
		"prompt_tokens": "250", "cached_tokens": "160", "completion_tokens": "30",
		"tool_calls": "1", "outcome": "ok",
	}
	got := map[string]string{}
	for k := range want {
		got[k] = turn.Attrs[k]
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the turn's line (-want +got):\n%s\nline: %s", diff, turn)
	}
	if turn.Attrs["duration"] == "" || turn.Attrs["session"] == "" {
		t.Errorf("the turn's line lacks its duration or session: %s", turn)
	}

	calls := infoOf("tool call")
	if len(calls) != 1 {
		t.Fatalf("%d Info lines for tool calls, want 1", len(calls))
	}
	call := calls[0]
	if call.Attrs["tool"] != "bash" || call.Attrs["exit_code"] != "3" || call.Attrs["duration"] == "" || call.Attrs["scope"] != "1001" {
		t.Errorf("the tool call's line lacks its tool, exit code, duration or scope: %s", call)
	}

	for _, line := range rec.Lines() {
		for name, content := range map[string]string{"the prompt": "PROMPT-WORDS", "the tool's output": "OUTPUT-WORDS", "the answer": "ANSWER-WORDS"} {
			if strings.Contains(line, content) {
				t.Errorf("a log line holds %s: %s", name, line)
			}
		}
	}
}

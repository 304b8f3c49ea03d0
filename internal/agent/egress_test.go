package agent_test

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// secretForms returns the secret as the tests forge it into loaded state:
// raw, base64, hex and JSON-escaped inside other text.
func secretForms() []string {
	return []string{
		"raw " + testSecret,
		"b64 " + base64.StdEncoding.EncodeToString([]byte("x"+testSecret)),
		"hex " + hex.EncodeToString([]byte(testSecret)),
	}
}

// assertNoSecretSent fails when any request holds the test secret in any
// form the redactor knows. The requests are searched as JSON, so an image's
// bytes are searched in their base64.
func assertNoSecretSent(t *testing.T, reqs []agent.Request) {
	t.Helper()
	if len(reqs) == 0 {
		t.Fatal("the provider received no request")
	}
	red := redactor.New([]string{testSecret})
	for i, req := range reqs {
		b, err := json.Marshal(req)
		if err != nil {
			t.Fatalf("encoding request %d: %v", i, err)
		}
		if s := string(b); red.Redact(s) != s {
			t.Errorf("request %d holds the secret (in some form)", i)
		}
	}
}

// forgedLine returns one transcript line holding m.
func forgedLine(t *testing.T, e agent.TranscriptEntry) string {
	t.Helper()
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	return string(b) + "\n"
}

// TestEgressRedactsForgedTranscript forges the state an agent could write
// into its own transcript (a compaction summary, a user message with an
// image that holds the secret, an assistant's tool call, a tool result, in
// several forms) and a system prompt built from an AGENTS.md holding the
// secret: the next model request holds none of it.
func TestEgressRedactsForgedTranscript(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	forms := strings.Join(secretForms(), " ")
	pngWithSecret := append([]byte("\x89PNG\r\n\x1a\n"), []byte("tEXt"+testSecret)...)
	var lines strings.Builder
	lines.WriteString(forgedLine(t, agent.TranscriptEntry{Type: agent.EntryCompaction, Summary: "summary: " + forms, Time: now}))
	lines.WriteString(forgedLine(t, agent.TranscriptEntry{Type: agent.EntryMessage, Message: &agent.Message{
		Role: agent.RoleUser, Time: now,
		Content: []agent.Content{agent.Text("forged user: " + forms), agent.Image("image/png", pngWithSecret)},
	}}))
	lines.WriteString(forgedLine(t, agent.TranscriptEntry{Type: agent.EntryMessage, Message: &agent.Message{
		Role: agent.RoleAssistant, Time: now, Content: []agent.Content{agent.Text("assistant: " + forms)},
		ToolCalls: []agent.ToolCall{{ID: "call_" + testSecret, Name: "bash", Arguments: `{"command":"echo ` + testSecret + `"}`}},
	}}))
	lines.WriteString(forgedLine(t, agent.TranscriptEntry{Type: agent.EntryMessage, Message: &agent.Message{
		Role: agent.RoleTool, Time: now, ToolCallID: "call_" + testSecret, ToolName: "bash",
		Content: []agent.Content{agent.Text("tool: " + forms + strings.Repeat(" padding", 100))},
		Details: map[string]any{"tail": testSecret},
	}}))
	if err := os.WriteFile(filepath.Join(dir, "chat-1.jsonl"), []byte(lines.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	faux := agenttest.NewFauxProvider(agenttest.FauxText("ok"))
	a := newTestAgent(t, faux, agent.WithSessionDir(dir),
		agent.WithSystemPrompt(func(agent.SessionInfo) string { return "AGENTS.md: " + forms }))
	s := openSession(t, a, agent.SessionOptions{ID: "chat-1"})
	if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("hello " + testSecret)}, nil); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	reqs := faux.Requests()
	assertNoSecretSent(t, reqs)
	b, _ := json.Marshal(reqs[0])
	if !strings.Contains(string(b), agent.WithheldImage) {
		t.Error("the image holding the secret was not replaced by the withheld note")
	}
	if strings.Contains(string(b), `"details"`) {
		t.Error("the request carries Details")
	}
}

// TestEgressRedactsCompactionRequests checks the summary request: the
// conversation it summarises is loaded state too.
func TestEgressRedactsCompactionRequests(t *testing.T) {
	faux := agenttest.NewFauxProvider(agenttest.FauxText("one"), agenttest.FauxText("two"), agenttest.FauxText("summary "+testSecret), agenttest.FauxText("after"))
	a := newTestAgent(t, faux, agent.WithCompactionKeepTurns(1))
	s := openSession(t, a, agent.SessionOptions{})
	for _, text := range []string{"first " + testSecret, "second"} {
		if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text(text)}, nil); err != nil {
			t.Fatalf("Prompt: %v", err)
		}
	}
	if err := s.Compact(context.Background()); err != nil {
		t.Fatalf("Compact: %v", err)
	}
	if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("third")}, nil); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	reqs := faux.Requests()
	if len(reqs) != 4 {
		t.Fatalf("the provider received %d requests, want 4", len(reqs))
	}
	assertNoSecretSent(t, reqs)
}

// TestEgressIsTheOnlyWayToTheProvider checks that no file of the package
// but egress.go calls the provider: every request passes the boundary.
func TestEgressIsTheOnlyWayToTheProvider(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "egress.go" {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(src), "provider.Complete(") {
			t.Errorf("%s calls the provider directly, past the egress boundary", f)
		}
	}
}

// TestEgressRedactsSecretsSpanningTextBlocks has a tool return the
// secret's base64 and hex split between two text blocks of its result, as
// an MCP server's result in several items may: no block holds a form of
// the secret alone, but the provider sends a message's text blocks as one
// text, joined by line breaks (agent.TextOf), in which the redactor knows
// both forms as wrapped. That joined text must hold neither.
func TestEgressRedactsSecretsSpanningTextBlocks(t *testing.T) {
	b64 := base64.StdEncoding.EncodeToString([]byte(testSecret))
	hx := hex.EncodeToString([]byte(testSecret))
	split := agenttest.NewTool("split", "", func(context.Context, *agent.Call) (agent.Result, error) {
		return agent.Result{Content: []agent.Content{
			agent.Text("blob " + b64[:len(b64)/2]), agent.Text(b64[len(b64)/2:] + " then " + hx[:len(hx)/2]),
			agent.Text(hx[len(hx)/2:] + " end"),
		}}, nil
	})
	faux := agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("split", `{}`)), agenttest.FauxText("done"))
	a := newTestAgent(t, faux, agent.WithTools(split))
	s := openSession(t, a, agent.SessionOptions{})
	if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, nil); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	reqs := faux.Requests()
	if len(reqs) != 2 {
		t.Fatalf("the provider received %d requests, want 2", len(reqs))
	}
	red := redactor.New([]string{testSecret})
	found := false
	for i, m := range reqs[1].Messages {
		if m.Role != agent.RoleTool {
			continue
		}
		found = true
		if text := agent.TextOf(m.Content); red.Redact(text) != text {
			t.Errorf("message %d, the tool result, holds the secret once its text blocks are joined", i)
		}
		if text := agent.TextOf(m.Content); !strings.Contains(text, "blob ") || !strings.Contains(text, " end") {
			t.Errorf("message %d lost the text around the secret: %d bytes left", i, len(text))
		}
	}
	if !found {
		t.Fatal("the second request holds no tool result")
	}
}

package agent

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// TestTranscriptRedactsEntries checks that every entry a transcript
// writes is redacted: a message's text, tool calls and details, and a
// compaction's summary.
func TestTranscriptRedactsEntries(t *testing.T) {
	const secret = "sk-fake-transcript-0123456789"
	path := filepath.Join(t.TempDir(), "s.jsonl")
	tr, _, err := openTranscript(path, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	tr.red = redactor.New([]string{secret})
	msgs := []Message{
		{Role: RoleUser, Content: []Content{Text("my key " + secret)}},
		{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "c1", Name: "bash", Arguments: `{"command":"echo ` + secret + `"}`}}},
		{Role: RoleTool, ToolCallID: "c1", ToolName: "bash", Content: []Content{Text(secret)}, Details: map[string]any{"k": secret}},
	}
	for _, m := range msgs {
		if err := tr.appendMessage(m); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.appendCompaction(compactionState{summary: "the user's key is " + secret, at: time.Now(), usersBefore: 1}, 10); err != nil {
		t.Fatal(err)
	}
	if err := tr.close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for i, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if strings.Contains(line, secret) {
			t.Errorf("transcript line %d holds the secret", i+1)
		}
	}
	if strings.Contains(msgs[0].Content[0].Text, redactor.Token) {
		t.Error("appendMessage changed the message it was given")
	}
}

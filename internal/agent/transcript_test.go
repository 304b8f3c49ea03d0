package agent

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// messageLine is one transcript line holding a user message.
func messageLine(t *testing.T, text string) string {
	t.Helper()
	b, err := json.Marshal(transcriptEntry{Type: entryMessage, Message: &Message{Role: RoleUser, Content: []Content{Text(text)}, Time: time.Unix(0, 0).UTC()}})
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestTranscriptLoad(t *testing.T) {
	tests := []struct {
		name      string
		content   func(t *testing.T) string
		wantTexts []string
		wantErr   string
	}{
		{"empty", func(t *testing.T) string { return "" }, nil, ""},
		{"two lines", func(t *testing.T) string {
			return messageLine(t, "a") + "\n" + messageLine(t, "b") + "\n"
		}, []string{"a", "b"}, ""},
		{"torn last line", func(t *testing.T) string {
			return messageLine(t, "a") + "\n" + messageLine(t, "b")[:20]
		}, []string{"a"}, ""},
		{"last line without newline", func(t *testing.T) string {
			return messageLine(t, "a") + "\n" + messageLine(t, "b")
		}, []string{"a", "b"}, ""},
		{"unknown entry type", func(t *testing.T) string {
			return `{"type":"compaction","summary":"x"}` + "\n" + messageLine(t, "a") + "\n"
		}, []string{"a"}, ""},
		{"corrupt middle line", func(t *testing.T) string {
			return messageLine(t, "a") + "\n{not json\n" + messageLine(t, "b") + "\n"
		}, nil, "line 2"},
		{"message entry without message", func(t *testing.T) string {
			return `{"type":"message"}` + "\n" + messageLine(t, "a") + "\n"
		}, nil, "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.jsonl")
			if err := os.WriteFile(path, []byte(tt.content(t)), 0o600); err != nil {
				t.Fatal(err)
			}
			tr, msgs, err := openTranscript(path, slog.New(slog.DiscardHandler))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("err = %v, want one naming %s and %s", err, path, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var texts []string
			for _, m := range msgs {
				texts = append(texts, TextOf(m.Content))
			}
			if strings.Join(texts, ",") != strings.Join(tt.wantTexts, ",") {
				t.Errorf("texts = %v, want %v", texts, tt.wantTexts)
			}
			// Appending after whatever was there must give a file that
			// loads with the new message last.
			if err := tr.appendMessage(Message{Role: RoleUser, Content: []Content{Text("new")}}); err != nil {
				t.Fatal(err)
			}
			tr.close()
			_, again, err := openTranscript(path, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatalf("reload after append: %v", err)
			}
			if len(again) != len(msgs)+1 || TextOf(again[len(again)-1].Content) != "new" {
				t.Errorf("reload has %d messages, want %d ending with new", len(again), len(msgs)+1)
			}
		})
	}
}

// TestDanglingCallsRepaired checks that a crash between a model answer and
// its tool results leaves a history the provider accepts.
func TestDanglingCallsRepaired(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "d.jsonl")
	a1, _ := json.Marshal(transcriptEntry{Type: entryMessage, Message: &Message{Role: RoleAssistant, ToolCalls: []ToolCall{{ID: "1", Name: "x"}, {ID: "2", Name: "y"}}}})
	r1, _ := json.Marshal(transcriptEntry{Type: entryMessage, Message: &Message{Role: RoleTool, ToolCallID: "1", ToolName: "x", Content: []Content{Text("ok")}}})
	if err := os.WriteFile(path, []byte(messageLine(t, "u")+"\n"+string(a1)+"\n"+string(r1)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a := newTestAgent(t, NewFauxProvider(), WithSessionDir(dir))
	s := openSession(t, a, SessionOptions{ID: "d"})
	msgs := s.Messages()
	if len(msgs) != 4 || msgs[3].ToolCallID != "2" || TextOf(msgs[3].Content) != abortedText {
		t.Fatalf("history has %d messages; want the missing result appended", len(msgs))
	}
	s.Close()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n != 4 {
		t.Errorf("transcript has %d lines, want 4", n)
	}
}

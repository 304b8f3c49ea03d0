package agent

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// tornMarker is the text of the message whose line a crash tore; the log
// must never hold it.
const tornMarker = "torn-content-must-not-be-logged"

// logEntry is one record a recordingHandler kept: its level, message and
// attributes rendered as text.
type logEntry struct {
	level slog.Level
	msg   string
	attrs map[string]string
}

// recordingHandler is a slog.Handler that keeps every record; safe for
// concurrent use. Groups are flattened: the tests log none.
type recordingHandler struct {
	mu      *sync.Mutex
	entries *[]logEntry
	attrs   []slog.Attr
}

// newRecordingHandler returns an empty recordingHandler.
func newRecordingHandler() *recordingHandler {
	return &recordingHandler{mu: &sync.Mutex{}, entries: &[]logEntry{}}
}

// Enabled records every level.
func (*recordingHandler) Enabled(context.Context, slog.Level) bool { return true }

// Handle keeps r.
func (h *recordingHandler) Handle(_ context.Context, r slog.Record) error {
	e := logEntry{level: r.Level, msg: r.Message, attrs: map[string]string{}}
	for _, a := range h.attrs {
		e.attrs[a.Key] = a.Value.String()
	}
	r.Attrs(func(a slog.Attr) bool {
		e.attrs[a.Key] = a.Value.String()
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	*h.entries = append(*h.entries, e)
	return nil
}

// WithAttrs returns a handler sharing h's records that adds attrs to each.
func (h *recordingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return &recordingHandler{mu: h.mu, entries: h.entries, attrs: append(append([]slog.Attr{}, h.attrs...), attrs...)}
}

// WithGroup returns h: groups are flattened.
func (h *recordingHandler) WithGroup(string) slog.Handler { return h }

// records returns a copy of the records kept so far.
func (h *recordingHandler) records() []logEntry {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]logEntry(nil), *h.entries...)
}

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
		// wantWarn, when set, is part of the one warning the load must
		// log, naming the file and the line; otherwise it logs none.
		wantWarn string
		wantLine string
	}{
		{name: "empty", content: func(t *testing.T) string { return "" }},
		{name: "two lines", content: func(t *testing.T) string {
			return messageLine(t, "a") + "\n" + messageLine(t, "b") + "\n"
		}, wantTexts: []string{"a", "b"}},
		{name: "torn last line", content: func(t *testing.T) string {
			torn := messageLine(t, tornMarker)
			return messageLine(t, "a") + "\n" + torn[:strings.Index(torn, tornMarker)+len(tornMarker)]
		}, wantTexts: []string{"a"}, wantWarn: "torn last line", wantLine: "2"},
		{name: "last line without newline", content: func(t *testing.T) string {
			return messageLine(t, "a") + "\n" + messageLine(t, "b")
		}, wantTexts: []string{"a", "b"}},
		{name: "unknown entry type", content: func(t *testing.T) string {
			return `{"type":"a-future-kind","note":"x"}` + "\n" + messageLine(t, "a") + "\n"
		}, wantTexts: []string{"a"}, wantWarn: "unknown type", wantLine: "1"},
		{name: "corrupt middle line", content: func(t *testing.T) string {
			return messageLine(t, "a") + "\n{not json\n" + messageLine(t, "b") + "\n"
		}, wantErr: "line 2"},
		{name: "message entry without message", content: func(t *testing.T) string {
			return `{"type":"message"}` + "\n" + messageLine(t, "a") + "\n"
		}, wantErr: "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.jsonl")
			if err := os.WriteFile(path, []byte(tt.content(t)), 0o600); err != nil {
				t.Fatal(err)
			}
			logs := newRecordingHandler()
			tr, msgs, err := openTranscript(path, slog.New(logs))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("err = %v, want one naming %s and %s", err, path, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkLoadWarning(t, logs.records(), path, tt.wantWarn, tt.wantLine)
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

// checkLoadWarning checks that a transcript load logged one warning
// holding want, naming path and line, and no part of the torn message; or
// nothing when want is empty.
func checkLoadWarning(t *testing.T, records []logEntry, path, want, line string) {
	t.Helper()
	for _, r := range records {
		if strings.Contains(r.msg, tornMarker) {
			t.Errorf("the log message %q holds the torn line's content", r.msg)
		}
		for k, v := range r.attrs {
			if strings.Contains(v, tornMarker) {
				t.Errorf("the log record %q holds the torn line's content in %s", r.msg, k)
			}
		}
	}
	if want == "" {
		if len(records) != 0 {
			t.Errorf("the load logged %d records, want none: %v", len(records), records)
		}
		return
	}
	if len(records) != 1 {
		t.Fatalf("the load logged %d records, want one warning holding %q: %v", len(records), want, records)
	}
	r := records[0]
	if r.level != slog.LevelWarn || !strings.Contains(r.msg, want) {
		t.Errorf("the load logged %v %q, want a warning holding %q", r.level, r.msg, want)
	}
	if r.attrs["path"] != path || r.attrs["line"] != line {
		t.Errorf("the warning's path is %q and line %q, want %q and %s", r.attrs["path"], r.attrs["line"], path, line)
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

package agent

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/logtest"
)

// tornMarker is the text of the message whose line a crash tore; the log
// must never hold it.
const tornMarker = "torn-content-must-not-be-logged"

// MessageLine is one transcript line holding a user message (exported for
// the external tests).
func MessageLine(t *testing.T, text string) string {
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
			return MessageLine(t, "a") + "\n" + MessageLine(t, "b") + "\n"
		}, wantTexts: []string{"a", "b"}},
		{name: "torn last line", content: func(t *testing.T) string {
			torn := MessageLine(t, tornMarker)
			return MessageLine(t, "a") + "\n" + torn[:strings.Index(torn, tornMarker)+len(tornMarker)]
		}, wantTexts: []string{"a"}, wantWarn: "torn last line", wantLine: "2"},
		{name: "last line without newline", content: func(t *testing.T) string {
			return MessageLine(t, "a") + "\n" + MessageLine(t, "b")
		}, wantTexts: []string{"a", "b"}},
		{name: "unknown entry type", content: func(t *testing.T) string {
			return `{"type":"a-future-kind","note":"x"}` + "\n" + MessageLine(t, "a") + "\n"
		}, wantTexts: []string{"a"}, wantWarn: "unknown type", wantLine: "1"},
		{name: "corrupt middle line", content: func(t *testing.T) string {
			return MessageLine(t, "a") + "\n{not json\n" + MessageLine(t, "b") + "\n"
		}, wantErr: "line 2"},
		{name: "message entry without message", content: func(t *testing.T) string {
			return `{"type":"message"}` + "\n" + MessageLine(t, "a") + "\n"
		}, wantErr: "line 1"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "s.jsonl")
			if err := os.WriteFile(path, []byte(tt.content(t)), 0o600); err != nil {
				t.Fatal(err)
			}
			logs := logtest.New()
			tr, msgs, err := openTranscript(path, logs.Logger())
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), path) {
					t.Fatalf("err = %v, want one naming %s and %s", err, path, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkLoadWarning(t, logs.Records(), path, tt.wantWarn, tt.wantLine)
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
func checkLoadWarning(t *testing.T, records []logtest.Record, path, want, line string) {
	t.Helper()
	for _, r := range records {
		if strings.Contains(r.Message, tornMarker) {
			t.Errorf("the log message %q holds the torn line's content", r.Message)
		}
		for k, v := range r.Attrs {
			if strings.Contains(v, tornMarker) {
				t.Errorf("the log record %q holds the torn line's content in %s", r.Message, k)
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
	if r.Level != slog.LevelWarn || !strings.Contains(r.Message, want) {
		t.Errorf("the load logged %v %q, want a warning holding %q", r.Level, r.Message, want)
	}
	if r.Attrs["path"] != path || r.Attrs["line"] != line {
		t.Errorf("the warning's path is %q and line %q, want %q and %s", r.Attrs["path"], r.Attrs["line"], path, line)
	}
}

// TestTranscriptCompactionLoad checks how compaction entries rebuild the
// working context, and that an impossible one stops loading.
func TestTranscriptCompactionLoad(t *testing.T) {
	msg := func(role Role, text string) string {
		b, err := json.Marshal(transcriptEntry{Type: entryMessage, Message: &Message{Role: role, Content: []Content{Text(text)}}})
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	comp := func(summary string, firstKept int) string {
		return fmt.Sprintf(`{"type":"compaction","summary":%q,"first_kept_user":%d}`+"\n", summary, firstKept)
	}
	history := msg(RoleUser, "u0") + msg(RoleAssistant, "a0") + msg(RoleUser, "u1") + msg(RoleAssistant, "a1")
	tests := []struct {
		name        string
		content     string
		wantSummary string
		wantTexts   []string
		wantErr     string
	}{
		{"none", history, "", []string{"u0", "a0", "u1", "a1"}, ""},
		{"one", history + comp("s1", 1) + msg(RoleUser, "u2"), "s1", []string{"u1", "a1", "u2"}, ""},
		{"two", history + comp("s1", 1) + msg(RoleUser, "u2") + comp("s2", 2), "s2", []string{"u2"}, ""},
		{"all", history + comp("s1", 2), "s1", []string{}, ""},
		{"beyond", history + comp("s1", 3), "", nil, "line 5"},
		{"backwards", history + comp("s1", 1) + comp("s0", 0), "", nil, "line 6"},
		{"no summary", history + `{"type":"compaction","first_kept_user":1}` + "\n" + msg(RoleUser, "u2"), "", nil, "line 5"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "c.jsonl")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			tr, msgs, err := openTranscript(path, slog.New(slog.DiscardHandler))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one naming %s", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer tr.close()
			if tr.loaded.summary != tt.wantSummary {
				t.Errorf("summary = %q, want %q", tr.loaded.summary, tt.wantSummary)
			}
			got := make([]string, 0, len(msgs))
			for _, m := range msgs {
				got = append(got, TextOf(m.Content))
			}
			if diff := cmp.Diff(tt.wantTexts, got); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		})
	}
}

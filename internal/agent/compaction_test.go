package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// tooLong is a provider's context-window error.
var tooLong = &ProviderError{StatusCode: 400, Code: "context_length_exceeded", Message: "maximum context length exceeded"}

// answer is a scripted text answer whose request used promptTokens.
func answer(text string, promptTokens int) FauxResponse {
	return FauxResponse{Text: text, Usage: Usage{PromptTokens: promptTokens}}
}

// prompt runs one turn of text or fails the test.
func prompt(t *testing.T, s *Session, text string) TurnResult {
	t.Helper()
	res, err := s.Prompt(context.Background(), []Content{Text(text)}, nil)
	if err != nil {
		t.Fatalf("Prompt(%q): %v", text, err)
	}
	return res
}

// texts lists the text of every message.
func texts(msgs []Message) []string {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, TextOf(m.Content))
	}
	return out
}

// transcriptEntries reads the session file of id in dir.
func transcriptEntries(t *testing.T, dir, id string) []transcriptEntry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []transcriptEntry
	for line := range strings.Lines(string(data)) {
		var e transcriptEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("transcript line does not parse: %v", err)
		}
		out = append(out, e)
	}
	return out
}

// compactionAgent is an agent with a 1000-token window, a 200-token reserve
// (threshold 800) and two kept turns, keeping transcripts in dir.
func compactionAgent(t *testing.T, faux *FauxProvider, dir string, opts ...Option) *Agent {
	t.Helper()
	base := []Option{WithSessionDir(dir), WithContextWindow(1000), WithContextReserve(200), WithCompactionKeepTurns(2)}
	return newTestAgent(t, faux, append(base, opts...)...)
}

// TestCompactionAtThreshold checks that a turn whose context would pass the
// threshold is compacted first (summary request without tools, latest turns
// kept) and that a restart rebuilds the same working context.
func TestCompactionAtThreshold(t *testing.T) {
	tests := []struct {
		name          string
		lastPrompt    int
		wantCompacted bool
	}{
		{"below the threshold", 700, false},
		{"above the threshold", 900, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			faux := NewFauxProvider(answer("a1", 100), answer("a2", 200), answer("a3", tt.lastPrompt))
			a := compactionAgent(t, faux, dir)
			s := openSession(t, a, SessionOptions{})
			for _, u := range []string{"u1", "u2", "u3"} {
				prompt(t, s, u)
			}
			if tt.wantCompacted {
				faux.Enqueue(FauxText("the user said u1 and u2"))
			}
			faux.Enqueue(answer("a4", 300))
			var log eventLog
			if _, err := s.Prompt(context.Background(), []Content{Text("u4")}, log.add); err != nil {
				t.Fatal(err)
			}
			reqs := faux.Requests()
			last := reqs[len(reqs)-1]
			if !tt.wantCompacted {
				if len(reqs) != 4 || len(last.Messages) != 7 {
					t.Fatalf("%d requests, last with %d messages; want 4 and the whole history (7)", len(reqs), len(last.Messages))
				}
				if !s.ContextUsage().LastCompaction.IsZero() {
					t.Error("LastCompaction is set without a compaction")
				}
				return
			}
			if len(reqs) != 5 {
				t.Fatalf("%d requests, want 5 (a summary before the fourth answer)", len(reqs))
			}
			sum := reqs[3]
			if sum.Tools != nil || sum.System != summarySystemPrompt || len(sum.Messages) != 1 {
				t.Errorf("summary request has %d tools, %d messages and system %.40q; want none, 1 and the summary prompt", len(sum.Tools), len(sum.Messages), sum.System)
			}
			conv := TextOf(sum.Messages[0].Content)
			for _, want := range []string{"u1", "a1", "u2", "a2"} {
				if !strings.Contains(conv, want) {
					t.Errorf("summary request lacks %q", want)
				}
			}
			if strings.Contains(conv, "u3") {
				t.Error("summary request holds u3, a kept turn")
			}
			wantTexts := []string{summaryHeader + "the user said u1 and u2", "u3", "a3", "u4"}
			if diff := cmp.Diff(wantTexts, texts(last.Messages)); diff != "" {
				t.Errorf("request after compaction (-want +got):\n%s", diff)
			}
			if !contains(kindsOf(log.all()), EventCompaction) {
				t.Error("no compaction event")
			}
			if s.ContextUsage().LastCompaction.IsZero() {
				t.Error("LastCompaction is zero after a compaction")
			}

			// A restart rebuilds the same working context, and the next
			// request is the one the running session would have sent.
			want := s.Messages()
			a.Close()
			faux2 := NewFauxProvider(FauxText("a5"))
			a2 := compactionAgent(t, faux2, dir)
			s2 := openSession(t, a2, SessionOptions{})
			if diff := cmp.Diff(want, s2.Messages()); diff != "" {
				t.Errorf("reloaded working context (-want +got):\n%s", diff)
			}
			if got := s2.ContextUsage().LastCompaction; !got.Equal(s.ContextUsage().LastCompaction) {
				t.Errorf("reloaded LastCompaction = %v, want %v", got, s.ContextUsage().LastCompaction)
			}
			prompt(t, s2, "u5")
			next := faux2.Requests()[0].Messages
			if diff := cmp.Diff(append(texts(want), "u5"), texts(next)); diff != "" {
				t.Errorf("next request after restart (-want +got):\n%s", diff)
			}
		})
	}
}

// contains reports whether kinds holds k.
func contains(kinds []EventKind, k EventKind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}

// TestContextTooLongRetry checks that a request rejected as too long
// compacts once and retries once.
func TestContextTooLongRetry(t *testing.T) {
	tests := []struct {
		name         string
		earlierTurns int
		script       []FauxResponse
		wantErr      string
		wantRequests int
	}{
		{"retry succeeds", 2, []FauxResponse{FauxError(tooLong), FauxText("summary"), FauxText("answer")}, "", 3},
		{"still too long", 2, []FauxResponse{FauxError(tooLong), FauxText("summary"), FauxError(tooLong)}, "still too long", 3},
		{"nothing to compact", 0, []FauxResponse{FauxError(tooLong)}, "compacting it failed", 1},
		{"summary fails", 1, []FauxResponse{FauxError(tooLong), FauxError(errors.New("summary broke"))}, "summary broke", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			faux := NewFauxProvider()
			a := compactionAgent(t, faux, t.TempDir(), WithContextWindow(100000))
			s := openSession(t, a, SessionOptions{})
			for i := range tt.earlierTurns {
				faux.Enqueue(FauxText(fmt.Sprintf("a%d", i)))
				prompt(t, s, fmt.Sprintf("u%d", i))
			}
			before := len(faux.Requests())
			faux.Enqueue(tt.script...)
			res, err := s.Prompt(context.Background(), []Content{Text("now")}, nil)
			if got := len(faux.Requests()) - before; got != tt.wantRequests {
				t.Errorf("the turn made %d requests, want %d", got, tt.wantRequests)
			}
			if tt.wantErr == "" {
				if err != nil || res.Text != "answer" {
					t.Fatalf("Prompt = %q, %v; want the answer", res.Text, err)
				}
				reqs := faux.Requests()
				if diff := cmp.Diff([]string{summaryHeader + "summary", "now"}, texts(reqs[len(reqs)-1].Messages)); diff != "" {
					t.Errorf("retried request (-want +got):\n%s", diff)
				}
				return
			}
			if !errors.Is(err, ErrContextTooLong) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Prompt error = %v, want ErrContextTooLong saying %q", err, tt.wantErr)
			}
		})
	}
}

// TestCompactOnDemand checks Session.Compact: the summary replaces the
// older turns, the transcript records it, and with nothing older it says so.
func TestCompactOnDemand(t *testing.T) {
	dir := t.TempDir()
	faux := NewFauxProvider(FauxText("a1"), FauxText("a2"))
	a := compactionAgent(t, faux, dir, WithCompactionKeepTurns(1))
	s := openSession(t, a, SessionOptions{})
	if err := s.Compact(context.Background()); !errors.Is(err, ErrNothingToCompact) {
		t.Fatalf("Compact on an empty session = %v, want ErrNothingToCompact", err)
	}
	prompt(t, s, "u1")
	prompt(t, s, "u2")
	faux.Enqueue(FauxText("summary of u1"))
	if err := s.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{summaryHeader + "summary of u1", "u2", "a2"}, texts(s.Messages())); diff != "" {
		t.Errorf("working context (-want +got):\n%s", diff)
	}
	entries := transcriptEntries(t, dir, s.ID())
	last := entries[len(entries)-1]
	if last.Type != entryCompaction || last.Summary != "summary of u1" || last.FirstKeptUser != 1 || last.Time.IsZero() {
		t.Errorf("last transcript entry = %+v, want the compaction keeping user message 1", last)
	}
	if n := len(entries); n != 5 {
		t.Errorf("transcript has %d entries, want the 4 messages and the compaction", n)
	}
	if err := s.Compact(context.Background()); !errors.Is(err, ErrNothingToCompact) {
		t.Errorf("second Compact = %v, want ErrNothingToCompact", err)
	}
}

// TestFailedSummaryLeavesContext checks that a summary request that fails
// changes nothing, on demand and before a turn.
func TestFailedSummaryLeavesContext(t *testing.T) {
	tests := []struct {
		name    string
		summary FauxResponse
	}{
		{"provider error", FauxError(&ProviderError{StatusCode: 500, Message: "down"})},
		{"empty summary", FauxText("  ")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			faux := NewFauxProvider(answer("a1", 10), answer("a2", 10), answer("a3", 900))
			a := compactionAgent(t, faux, dir, WithCompactionKeepTurns(1))
			s := openSession(t, a, SessionOptions{})
			for _, u := range []string{"u1", "u2", "u3"} {
				prompt(t, s, u)
			}
			want := s.Messages()
			file := filepath.Join(dir, s.ID()+".jsonl")
			wantFile, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}

			faux.Enqueue(tt.summary)
			if err := s.Compact(context.Background()); err == nil {
				t.Fatal("Compact succeeded with a failing summary")
			}
			if diff := cmp.Diff(want, s.Messages()); diff != "" {
				t.Errorf("working context changed (-want +got):\n%s", diff)
			}
			if got, _ := os.ReadFile(file); string(got) != string(wantFile) {
				t.Error("the transcript changed")
			}
			if !s.ContextUsage().LastCompaction.IsZero() {
				t.Error("LastCompaction set by a failed compaction")
			}

			// Before a turn over the threshold, the turn goes ahead with
			// the whole context.
			faux.Enqueue(tt.summary, FauxText("a4"))
			prompt(t, s, "u4")
			reqs := faux.Requests()
			if n := len(reqs[len(reqs)-1].Messages); n != 7 {
				t.Errorf("request after a failed compaction has %d messages, want 7", n)
			}
		})
	}
}

// TestOldToolResultsShortened checks that tool results before the kept
// turns are shortened in the working context and whole in the transcript.
func TestOldToolResultsShortened(t *testing.T) {
	var lines []string
	for i := range 200 {
		lines = append(lines, fmt.Sprintf("line %03d of a long listing", i))
	}
	long := strings.Join(lines, "\n")
	dump := newTool("dump", "", func(ctx context.Context, call *Call) (Result, error) { return TextResult(long), nil })
	dir := t.TempDir()
	faux := NewFauxProvider(FauxToolCalls(FauxCall("dump", "{}")), FauxText("dumped"), FauxText("a2"), FauxText("a3"))
	a := compactionAgent(t, faux, dir, WithCompactionKeepTurns(1), WithContextWindow(1<<20), WithTools(dump))
	s := openSession(t, a, SessionOptions{})
	prompt(t, s, "u1")
	if got := TextOf(s.Messages()[2].Content); got != long {
		t.Errorf("the latest turn's tool result is shortened to %d bytes", len(got))
	}
	prompt(t, s, "u2")
	prompt(t, s, "u3")
	reqs := faux.Requests()
	sent := TextOf(reqs[len(reqs)-1].Messages[2].Content)
	for _, want := range []string{"line 000", "line 009", "line 199", "180 lines", "cut to save context"} {
		if !strings.Contains(sent, want) {
			t.Errorf("shortened result lacks %q", want)
		}
	}
	if strings.Contains(sent, "line 100") || len(sent) > oldResultMaxBytes {
		t.Errorf("old tool result sent with %d bytes, want it shortened", len(sent))
	}
	if diff := cmp.Diff(sent, TextOf(s.Messages()[2].Content)); diff != "" {
		t.Errorf("Messages differs from the request (-request +Messages):\n%s", diff)
	}
	var whole bool
	for _, e := range transcriptEntries(t, dir, s.ID()) {
		if e.Message != nil && e.Message.Role == RoleTool && TextOf(e.Message.Content) == long {
			whole = true
		}
	}
	if !whole {
		t.Error("the transcript does not hold the whole tool result")
	}
}

// TestCompactionRedacted checks that neither the summary request nor the
// persisted summary carries a secret.
func TestCompactionRedacted(t *testing.T) {
	dir := t.TempDir()
	faux := NewFauxProvider(FauxText("a1"), FauxText("a2"), FauxText("the key is "+testSecret))
	a := compactionAgent(t, faux, dir, WithCompactionKeepTurns(1))
	s := openSession(t, a, SessionOptions{})
	prompt(t, s, "my key is "+testSecret)
	prompt(t, s, "u2")
	var log eventLog
	s.mu.Lock()
	s.frontEnd = log.add
	s.mu.Unlock()
	if err := s.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := faux.Requests()
	if jsonLeaks(t, reqs[len(reqs)-1]) {
		t.Error("the summary request holds the secret")
	}
	if jsonLeaks(t, s.Messages()) {
		t.Error("the working context holds the secret")
	}
	for _, e := range transcriptEntries(t, dir, s.ID()) {
		if e.Type == entryCompaction && leaks(e.Summary) {
			t.Error("the transcript's summary holds the secret")
		}
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
			if diff := cmp.Diff(tt.wantTexts, texts(msgs)); diff != "" {
				t.Errorf("messages (-want +got):\n%s", diff)
			}
		})
	}
}

package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// tooLong is a provider's context-window error.
var tooLong = &agent.ProviderError{StatusCode: 400, Code: "context_length_exceeded", Message: "maximum context length exceeded"}

// answer is a scripted text answer whose request used promptTokens.
func answer(text string, promptTokens int) agenttest.FauxResponse {
	return agenttest.FauxResponse{Text: text, Usage: agent.Usage{PromptTokens: promptTokens}}
}

// prompt runs one turn of text or fails the test.
func prompt(t *testing.T, s *agent.Session, text string) agent.TurnResult {
	t.Helper()
	res, err := s.Prompt(context.Background(), []agent.Content{agent.Text(text)}, nil)
	if err != nil {
		t.Fatalf("Prompt(%q): %v", text, err)
	}
	return res
}

// texts lists the text of every message.
func texts(msgs []agent.Message) []string {
	out := make([]string, 0, len(msgs))
	for _, m := range msgs {
		out = append(out, agent.TextOf(m.Content))
	}
	return out
}

// transcriptEntries reads the session file of id in dir.
func transcriptEntries(t *testing.T, dir, id string) []agent.TranscriptEntry {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, id+".jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	var out []agent.TranscriptEntry
	for line := range strings.Lines(string(data)) {
		var e agent.TranscriptEntry
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("transcript line does not parse: %v", err)
		}
		out = append(out, e)
	}
	return out
}

// compactionAgent is an agent with a 1000-token window, a 200-token reserve
// (threshold 800) and two kept turns, keeping transcripts in dir.
func compactionAgent(t *testing.T, faux *agenttest.FauxProvider, dir string, opts ...agent.Option) *agent.Agent {
	t.Helper()
	base := []agent.Option{agent.WithSessionDir(dir), agent.WithContextWindow(1000), agent.WithContextReserve(200), agent.WithCompactionKeepTurns(2)}
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
			faux := agenttest.NewFauxProvider(answer("a1", 100), answer("a2", 200), answer("a3", tt.lastPrompt))
			a := compactionAgent(t, faux, dir)
			s := openSession(t, a, agent.SessionOptions{})
			for _, u := range []string{"u1", "u2", "u3"} {
				prompt(t, s, u)
			}
			if tt.wantCompacted {
				faux.Enqueue(agenttest.FauxText("the user said u1 and u2"))
			}
			faux.Enqueue(answer("a4", 300))
			var log eventLog
			if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("u4")}, log.add); err != nil {
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
			if sum.Tools != nil || sum.System != agent.SummarySystemPrompt || len(sum.Messages) != 1 {
				t.Errorf("summary request has %d tools, %d messages and system %.40q; want none, 1 and the summary prompt", len(sum.Tools), len(sum.Messages), sum.System)
			}
			conv := agent.TextOf(sum.Messages[0].Content)
			for _, want := range []string{"u1", "a1", "u2", "a2"} {
				if !strings.Contains(conv, want) {
					t.Errorf("summary request lacks %q", want)
				}
			}
			if strings.Contains(conv, "u3") {
				t.Error("summary request holds u3, a kept turn")
			}
			wantTexts := []string{agent.SummaryHeader + "the user said u1 and u2", "u3", "a3", "u4"}
			if diff := cmp.Diff(wantTexts, texts(last.Messages)); diff != "" {
				t.Errorf("request after compaction (-want +got):\n%s", diff)
			}
			if !contains(kindsOf(log.all()), agent.EventCompaction) {
				t.Error("no compaction event")
			}
			if s.ContextUsage().LastCompaction.IsZero() {
				t.Error("LastCompaction is zero after a compaction")
			}

			// A restart rebuilds the same working context, and the next
			// request is the one the running session would have sent.
			want := s.Messages()
			a.Close()
			faux2 := agenttest.NewFauxProvider(agenttest.FauxText("a5"))
			a2 := compactionAgent(t, faux2, dir)
			s2 := openSession(t, a2, agent.SessionOptions{})
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
func contains(kinds []agent.EventKind, k agent.EventKind) bool {
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
		script       []agenttest.FauxResponse
		wantErr      string
		wantRequests int
	}{
		{"retry succeeds", 2, []agenttest.FauxResponse{agenttest.FauxError(tooLong), agenttest.FauxText("summary"), agenttest.FauxText("answer")}, "", 3},
		{"still too long", 2, []agenttest.FauxResponse{agenttest.FauxError(tooLong), agenttest.FauxText("summary"), agenttest.FauxError(tooLong)}, "still too long", 3},
		{"nothing to compact", 0, []agenttest.FauxResponse{agenttest.FauxError(tooLong)}, "compacting it failed", 1},
		{"summary fails", 1, []agenttest.FauxResponse{agenttest.FauxError(tooLong), agenttest.FauxError(errors.New("summary broke"))}, "summary broke", 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			faux := agenttest.NewFauxProvider()
			a := compactionAgent(t, faux, t.TempDir(), agent.WithContextWindow(100000))
			s := openSession(t, a, agent.SessionOptions{})
			for i := range tt.earlierTurns {
				faux.Enqueue(agenttest.FauxText(fmt.Sprintf("a%d", i)))
				prompt(t, s, fmt.Sprintf("u%d", i))
			}
			before := len(faux.Requests())
			faux.Enqueue(tt.script...)
			res, err := s.Prompt(context.Background(), []agent.Content{agent.Text("now")}, nil)
			if got := len(faux.Requests()) - before; got != tt.wantRequests {
				t.Errorf("the turn made %d requests, want %d", got, tt.wantRequests)
			}
			if tt.wantErr == "" {
				if err != nil || res.Text != "answer" {
					t.Fatalf("Prompt = %q, %v; want the answer", res.Text, err)
				}
				reqs := faux.Requests()
				if diff := cmp.Diff([]string{agent.SummaryHeader + "summary", "now"}, texts(reqs[len(reqs)-1].Messages)); diff != "" {
					t.Errorf("retried request (-want +got):\n%s", diff)
				}
				return
			}
			if !errors.Is(err, agent.ErrContextTooLong) || !strings.Contains(err.Error(), tt.wantErr) {
				t.Errorf("Prompt error = %v, want ErrContextTooLong saying %q", err, tt.wantErr)
			}
		})
	}
}

// TestCompactOnDemand checks Session.Compact: the summary replaces the
// older turns, the transcript records it, and with nothing older it says so.
func TestCompactOnDemand(t *testing.T) {
	dir := t.TempDir()
	faux := agenttest.NewFauxProvider(agenttest.FauxText("a1"), agenttest.FauxText("a2"))
	a := compactionAgent(t, faux, dir, agent.WithCompactionKeepTurns(1))
	s := openSession(t, a, agent.SessionOptions{})
	if err := s.Compact(context.Background()); !errors.Is(err, agent.ErrNothingToCompact) {
		t.Fatalf("Compact on an empty session = %v, want ErrNothingToCompact", err)
	}
	prompt(t, s, "u1")
	prompt(t, s, "u2")
	faux.Enqueue(agenttest.FauxText("summary of u1"))
	if err := s.Compact(context.Background()); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{agent.SummaryHeader + "summary of u1", "u2", "a2"}, texts(s.Messages())); diff != "" {
		t.Errorf("working context (-want +got):\n%s", diff)
	}
	entries := transcriptEntries(t, dir, s.ID())
	last := entries[len(entries)-1]
	if last.Type != agent.EntryCompaction || last.Summary != "summary of u1" || last.FirstKeptUser != 1 || last.Time.IsZero() {
		t.Errorf("last transcript entry = %+v, want the compaction keeping user message 1", last)
	}
	if n := len(entries); n != 5 {
		t.Errorf("transcript has %d entries, want the 4 messages and the compaction", n)
	}
	if err := s.Compact(context.Background()); !errors.Is(err, agent.ErrNothingToCompact) {
		t.Errorf("second Compact = %v, want ErrNothingToCompact", err)
	}
}

// TestFailedSummaryLeavesContext checks that a summary request that fails
// changes nothing, on demand and before a turn.
func TestFailedSummaryLeavesContext(t *testing.T) {
	tests := []struct {
		name    string
		summary agenttest.FauxResponse
	}{
		{"provider error", agenttest.FauxError(&agent.ProviderError{StatusCode: 500, Message: "down"})},
		{"empty summary", agenttest.FauxText("  ")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			faux := agenttest.NewFauxProvider(answer("a1", 10), answer("a2", 10), answer("a3", 900))
			a := compactionAgent(t, faux, dir, agent.WithCompactionKeepTurns(1))
			s := openSession(t, a, agent.SessionOptions{})
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
			faux.Enqueue(tt.summary, agenttest.FauxText("a4"))
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
	dump := agenttest.NewTool("dump", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) { return agent.TextResult(long), nil })
	dir := t.TempDir()
	faux := agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("dump", "{}")), agenttest.FauxText("dumped"), agenttest.FauxText("a2"), agenttest.FauxText("a3"))
	a := compactionAgent(t, faux, dir, agent.WithCompactionKeepTurns(1), agent.WithContextWindow(1<<20), agent.WithTools(dump))
	s := openSession(t, a, agent.SessionOptions{})
	prompt(t, s, "u1")
	if got := agent.TextOf(s.Messages()[2].Content); got != long {
		t.Errorf("the latest turn's tool result is shortened to %d bytes", len(got))
	}
	prompt(t, s, "u2")
	prompt(t, s, "u3")
	reqs := faux.Requests()
	sent := agent.TextOf(reqs[len(reqs)-1].Messages[2].Content)
	for _, want := range []string{"line 000", "line 009", "line 199", "180 lines", "cut to save context"} {
		if !strings.Contains(sent, want) {
			t.Errorf("shortened result lacks %q", want)
		}
	}
	if strings.Contains(sent, "line 100") || len(sent) > agent.OldResultMaxBytes {
		t.Errorf("old tool result sent with %d bytes, want it shortened", len(sent))
	}
	if diff := cmp.Diff(sent, agent.TextOf(s.Messages()[2].Content)); diff != "" {
		t.Errorf("Messages differs from the request (-request +Messages):\n%s", diff)
	}
	var whole bool
	for _, e := range transcriptEntries(t, dir, s.ID()) {
		if e.Message != nil && e.Message.Role == agent.RoleTool && agent.TextOf(e.Message.Content) == long {
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
	faux := agenttest.NewFauxProvider(agenttest.FauxText("a1"), agenttest.FauxText("a2"), agenttest.FauxText("the key is "+testSecret))
	a := compactionAgent(t, faux, dir, agent.WithCompactionKeepTurns(1))
	s := openSession(t, a, agent.SessionOptions{})
	prompt(t, s, "my key is "+testSecret)
	prompt(t, s, "u2")
	var log eventLog
	s.SetFrontEnd(log.add)
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
		if e.Type == agent.EntryCompaction && leaks(e.Summary) {
			t.Error("the transcript's summary holds the secret")
		}
	}
}

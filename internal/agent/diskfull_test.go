package agent_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/logtest"
	"github.com/volcanic/telegram-agent/internal/tmpfstest"
)

// The tests here put the session dir on a real tmpfs that fills up
// (tmpfstest).

// bigResult is a tool result larger than a page, which needs new blocks.
var bigResult = strings.Repeat("tool output ", 2000)

// diskFullAgent returns an agent whose session dir is d, logging to rec,
// with a tool "fill" that fills d and returns bigResult.
func diskFullAgent(t *testing.T, d *tmpfstest.Disk, rec *logtest.Recorder, faux *agenttest.FauxProvider, opts ...agent.Option) *agent.Agent {
	fill := agenttest.NewTool("fill", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) {
		d.Fill()
		return agent.TextResult(bigResult), nil
	})
	return newTestAgent(t, faux, append([]agent.Option{agent.WithTools(fill), agent.WithSessionDir(d.Dir), agent.WithLogger(rec.Logger())}, opts...)...)
}

// warnOrWorse returns the records at Warn or above.
func warnOrWorse(rec *logtest.Recorder) []logtest.Record {
	return rec.Find(func(r logtest.Record) bool { return r.Level >= slog.LevelWarn })
}

// TestToolResultsOnFullDisk runs turns whose tool fills the disk, on a
// disk freed again before each turn (a nearly full disk: the short
// messages fit, the long results do not): the agent logs one Error for
// the whole episode, not one per result, and no end while results keep
// failing. The calls not run after a result that could not be written are
// answered, for the model, with why in words, without the path.
func TestToolResultsOnFullDisk(t *testing.T) {
	d := tmpfstest.Mount(t, 1<<20)
	rec := logtest.New()
	var responses []agenttest.FauxResponse
	const turns = 3
	for i := range turns {
		responses = append(responses, agenttest.FauxToolCalls(
			agent.ToolCall{ID: fmt.Sprintf("t%d-a", i), Name: "fill", Arguments: `{}`},
			agent.ToolCall{ID: fmt.Sprintf("t%d-b", i), Name: "fill", Arguments: `{}`},
		))
	}
	faux := agenttest.NewFauxProvider(append(responses, agenttest.FauxText("done"))...)
	a := diskFullAgent(t, d, rec, faux)
	s := openSession(t, a, agent.SessionOptions{ID: "full"})
	for i := range turns {
		d.Drain()
		if _, err := s.Prompt(t.Context(), []agent.Content{agent.Text(fmt.Sprintf("turn %d", i))}, nil); err == nil {
			t.Fatalf("turn %d succeeded; want its tool result refused by the full disk", i)
		}
	}
	w := warnOrWorse(rec)
	if len(w) != 1 || w[0].Level != slog.LevelError || !strings.Contains(w[0].Message, "a transcript cannot be written") {
		t.Errorf("%d turns whose results the disk refused logged %d warnings and errors, want the episode's one Error:\n%s", turns, len(w), rec.Text())
	}
	if again := rec.Find(logtest.Is(slog.LevelDebug, "agent: a transcript still cannot be written")); len(again) < turns-1 {
		t.Errorf("%d failures at Debug, want at least %d:\n%s", len(again), turns-1, rec.Text())
	}
	if ended := rec.Find(logtest.Is(slog.LevelInfo, "agent: transcripts are written again")); len(ended) != 0 {
		t.Errorf("the episode ended while results kept failing:\n%s", rec.Text())
	}

	// What the model sees next: the result kept in memory, and the call
	// not run, with why.
	d.Drain()
	if _, err := s.Prompt(t.Context(), []agent.Content{agent.Text("and now")}, nil); err != nil {
		t.Fatalf("the turn after the disk was freed: %v", err)
	}
	reqs := faux.Requests()
	results := map[string]string{}
	for _, m := range reqs[len(reqs)-1].Messages {
		if m.Role == agent.RoleTool {
			results[m.ToolCallID] = agent.TextOf(m.Content)
		}
	}
	// The working context shortens old results; what is left is the tool's.
	if got := results["t0-a"]; !strings.HasPrefix(got, bigResult[:200]) {
		t.Errorf("the model sees %q for the result kept in memory, want the tool's output", got[:min(len(got), 100)])
	}
	got := results["t0-b"]
	if !strings.HasPrefix(got, "Not run:") || !strings.Contains(got, "disk is full") || strings.Contains(got, d.Dir) || strings.Contains(got, "/") {
		t.Errorf("the model is told %q of the call not run, want why in words, without a path", got)
	}
}

// TestTranscriptEpisodeEnds: a result the full disk refused begins the
// episode, and the first transcript write after the quiet time ends it
// with one Info line.
func TestTranscriptEpisodeEnds(t *testing.T) {
	d := tmpfstest.Mount(t, 1<<20)
	rec := logtest.New()
	faux := agenttest.NewFauxProvider(
		agenttest.FauxToolCalls(agent.ToolCall{ID: "c1", Name: "fill", Arguments: `{}`}),
		agenttest.FauxText("fine again"),
	)
	a := diskFullAgent(t, d, rec, faux, agent.WithTranscriptQuiet(0))
	s := openSession(t, a, agent.SessionOptions{ID: "ends"})
	if _, err := s.Prompt(t.Context(), []agent.Content{agent.Text("fill it")}, nil); err == nil {
		t.Fatal("the turn succeeded; want its tool result refused by the full disk")
	}
	rec.Wait(t, "the episode's Error", logtest.Is(slog.LevelError, "agent: a transcript cannot be written: what it lacks is kept in memory until the session is reopened; failures are logged at debug until a transcript is written again"))
	d.Drain()
	if _, err := s.Prompt(t.Context(), []agent.Content{agent.Text("again")}, nil); err != nil {
		t.Fatalf("the turn after the disk was freed: %v", err)
	}
	ended := rec.Find(logtest.Is(slog.LevelInfo, "agent: transcripts are written again"))
	if len(ended) != 1 || ended[0].Attrs["failures"] != "1" {
		t.Errorf("the end of the episode was logged %d times, want once with failures=1:\n%s", len(ended), rec.Text())
	}
}

// TestCompactionOnFullDisk lets the full disk refuse a compaction: it is
// logged as the episode's Error (not a warning per request), the request
// goes as it is, and while the episode lasts the next turn does not pay
// for another summary it could not record.
func TestCompactionOnFullDisk(t *testing.T) {
	d := tmpfstest.Mount(t, 1<<20)
	rec := logtest.New()
	longSummary := strings.Repeat("the user said many things ", 400)
	faux := agenttest.NewFauxProvider(answer("a1", 100), answer("a2", 200), answer("a3", 900),
		// Turn 4: the summary, which the full disk refuses, then the
		// answer, after which the disk has room again.
		agenttest.FauxFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
			d.Fill()
			return agent.Response{Text: longSummary}, nil
		}),
		agenttest.FauxFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
			d.Drain()
			return agent.Response{Text: "a4", Usage: agent.Usage{PromptTokens: 900}}, nil
		}),
		answer("a5", 300),
	)
	a := compactionAgent(t, faux, d.Dir, agent.WithLogger(rec.Logger()))
	s := openSession(t, a, agent.SessionOptions{})
	for _, u := range []string{"u1", "u2", "u3", "u4", "u5"} {
		prompt(t, s, u)
	}
	w := warnOrWorse(rec)
	if len(w) != 1 || w[0].Level != slog.LevelError || !strings.Contains(w[0].Message, "a transcript cannot be written") || w[0].Attrs["compaction"] == "" {
		t.Errorf("a compaction the disk refused logged %d warnings and errors, want the episode's one Error, naming the compaction:\n%s", len(w), rec.Text())
	}
	reqs := faux.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d requests, want 6: three turns, a summary and two answers", len(reqs))
	}
	if last := reqs[5]; last.System == agent.SummarySystemPrompt || agent.TextOf(last.Messages[len(last.Messages)-1].Content) != "u5" {
		t.Errorf("the last request is not the answer to u5 (system %.40q)", last.System)
	}
	if got := s.ContextUsage().LastCompaction; !got.IsZero() {
		t.Errorf("LastCompaction = %v, want none: the compaction was not recorded", got)
	}
}

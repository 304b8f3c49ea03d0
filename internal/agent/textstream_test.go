package agent_test

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// streamed is a scripted answer that streams deltas, whose text is their
// concatenation.
func streamed(deltas ...string) agenttest.FauxResponse {
	return agenttest.FauxFunc(func(_ context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
		for _, d := range deltas {
			onText(d)
		}
		return agent.Response{Text: strings.Join(deltas, "")}, nil
	})
}

// streamedChecked is streamed, checking after each delta that what the
// step's text deltas in log show is settled (see agent.ShownSettled).
func streamedChecked(t *testing.T, red *redactor.Redactor, log *eventLog, deltas ...string) agenttest.FauxResponse {
	return agenttest.FauxFunc(func(_ context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
		before := len(log.all())
		written := ""
		for i, d := range deltas {
			onText(d)
			written += d
			shown := ""
			for _, ev := range log.all()[before:] {
				if ev.Kind == agent.EventTextDelta {
					shown += ev.Text
				}
			}
			if !agent.ShownSettled(red, testSecret, written, shown) {
				t.Errorf("after delta %d of %d, the %d bytes shown could end in part of the secret", i+1, len(deltas), len(shown))
			}
		}
		return agent.Response{Text: written}, nil
	})
}

// splitAt cuts s at the given increasing positions.
func splitAt(s string, at ...int) []string {
	var out []string
	last := 0
	for _, p := range at {
		out = append(out, s[last:p])
		last = p
	}
	return append(out, s[last:])
}

// checkDeltaRun checks the text deltas of one model step, in order,
// against the step's text: after each delta, what the step showed so far
// is a prefix of the text redacted whole, and the deltas add up to it.
// Failures name lengths, never the secret.
func checkDeltaRun(t *testing.T, red *redactor.Redactor, deltas []string, text string) {
	t.Helper()
	want := red.Redact(text)
	shown := ""
	for i, d := range deltas {
		if d == "" {
			t.Errorf("delta %d is empty", i)
		}
		shown += d
		if !strings.HasPrefix(want, shown) {
			t.Errorf("after delta %d of %d, the %d bytes shown are no prefix of the redacted text", i+1, len(deltas), len(shown))
			return
		}
	}
	if shown != want {
		t.Errorf("the deltas add up to %d bytes, want the %d of the text redacted whole", len(shown), len(want))
	}
}

// deltaRuns returns the texts of each run of consecutive text deltas.
func deltaRuns(events []agent.Event) [][]string {
	var runs [][]string
	prev := agent.EventKind(0)
	for _, ev := range events {
		if ev.Kind == agent.EventTextDelta {
			if prev != agent.EventTextDelta {
				runs = append(runs, nil)
			}
			runs[len(runs)-1] = append(runs[len(runs)-1], ev.Text)
		}
		prev = ev.Kind
	}
	return runs
}

// TestSplitSecretNeverStreams streams an answer holding the secret in 2,
// 3 and one-byte deltas, cut at every point (the three-way cuts at every
// pair of points in and around the secret): no delta, and no prefix of
// their concatenation, shows the secret or any four bytes of it, and the
// answer shows the token.
func TestSplitSecretNeverStreams(t *testing.T) {
	red := redactor.New([]string{testSecret})
	text := "the key is " + testSecret + " and that is all"
	start, end := strings.Index(text, testSecret), strings.Index(text, testSecret)+len(testSecret)
	if red.Redact(text) == text {
		t.Fatal("the redactor does not redact the test text")
	}
	var cuts [][]int
	for i := 1; i < len(text); i++ {
		cuts = append(cuts, []int{i})
	}
	for i := start - 1; i <= end; i++ {
		for j := i + 1; j <= end+1; j++ {
			cuts = append(cuts, []int{i, j})
		}
	}
	every := make([]int, 0, len(text)-1)
	for i := 1; i < len(text); i++ {
		every = append(every, i)
	}
	cuts = append(cuts, every)

	faux := agenttest.NewFauxProvider()
	a := newTestAgent(t, faux)
	for n, at := range cuts {
		deltas := splitAt(text, at...)
		var log eventLog
		faux.Enqueue(streamedChecked(t, red, &log, deltas...))
		s := openSession(t, a, agent.SessionOptions{ID: fmt.Sprintf("split-%d", n)})
		res, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, log.add)
		if err != nil {
			t.Fatalf("%d deltas cut at %v: Prompt: %v", len(deltas), at, err)
		}
		runs := deltaRuns(log.all())
		if len(runs) != 1 {
			t.Fatalf("%d deltas cut at %v: %d runs of text deltas, want 1", len(deltas), at, len(runs))
		}
		shown := ""
		for _, d := range runs[0] {
			shown += d
			for k := 0; k+4 <= len(testSecret); k++ {
				if strings.Contains(shown, testSecret[k:k+4]) {
					t.Fatalf("%d deltas cut at %v: the text shown holds bytes %d..%d of the secret", len(deltas), at, k, k+4)
				}
			}
		}
		checkDeltaRun(t, red, runs[0], text)
		if !strings.Contains(shown, redactor.Token) || res.Text != red.Redact(text) {
			t.Errorf("%d deltas cut at %v: the answer does not show the token in place of the secret", len(deltas), at)
		}
		if t.Failed() {
			t.Fatalf("%d deltas cut at %v failed", len(deltas), at)
		}
	}
}

// TestStreamedTextIsItsRedaction checks streams that end in, or pass,
// what could begin a secret: each step's deltas add up to its text
// redacted whole, a run that turns out to be no secret is shown whole, and
// none is shown before the delta that settles it.
func TestStreamedTextIsItsRedaction(t *testing.T) {
	prefix := testSecret[:10] // shorter than a fragment: no secret alone
	tests := []struct {
		name  string
		steps [][]string
	}{
		{"ends in a secret's beginning", [][]string{{"ask for ", prefix}}},
		{"ends in a secret's beginning, byte by byte", [][]string{splitAt("ask for "+prefix, 1, 3, 5, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17)}},
		{"a secret's beginning goes on as no secret", [][]string{{"ask for ", prefix, "xyz and more"}}},
		{"a secret's beginning alone", [][]string{{prefix}}},
		{"ends in the secret", [][]string{{"the key: ", testSecret[:7], testSecret[7:]}}},
		{"the secret in the middle of a delta", [][]string{{"a", "b " + testSecret + " c", "d"}}},
		{"a prefix in one step, the rest in the next", [][]string{{"see ", testSecret[:7]}, {testSecret[7:], " ok"}}},
		{"plain text", [][]string{{"nothing ", "to ", "see"}}},
	}
	red := redactor.New([]string{testSecret})
	echo := agenttest.NewTool("echo", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) { return agent.TextResult("ok"), nil })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var log eventLog
			var responses []agenttest.FauxResponse
			for i, deltas := range tt.steps {
				r := streamedChecked(t, red, &log, deltas...)
				if i < len(tt.steps)-1 {
					f := r.Func
					r.Func = func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
						resp, err := f(ctx, req, onText)
						resp.ToolCalls = []agent.ToolCall{agenttest.FauxCall("echo", `{}`)}
						return resp, err
					}
				}
				responses = append(responses, r)
			}
			s := openSession(t, newTestAgent(t, agenttest.NewFauxProvider(responses...), agent.WithTools(echo)), agent.SessionOptions{})
			res, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, log.add)
			if err != nil {
				t.Fatalf("Prompt: %v", err)
			}
			runs := deltaRuns(log.all())
			if len(runs) != len(tt.steps) {
				t.Fatalf("%d runs of text deltas, want one per step (%d)", len(runs), len(tt.steps))
			}
			for i, deltas := range tt.steps {
				checkDeltaRun(t, red, runs[i], strings.Join(deltas, ""))
			}
			if want := red.Redact(strings.Join(tt.steps[len(tt.steps)-1], "")); res.Text != want {
				t.Errorf("the turn's text is %d bytes, want the %d of the last step's text redacted", len(res.Text), len(want))
			}
			for _, ev := range log.all() {
				if leaks(ev.Text) {
					t.Errorf("a %s event holds the secret", ev.Kind)
				}
			}
		})
	}
}

// escapeEvery returns s with every nth byte written as a JSON \u escape,
// so that no run of it long enough to be a fragment is left as it is.
func escapeEvery(s string, n int) string {
	var b strings.Builder
	for i := range len(s) {
		if i%n == 0 {
			fmt.Fprintf(&b, `\u%04x`, s[i])
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// checkArgs returns a check that the arguments of a tool call's start and
// end events decode to want.
func checkArgs(want map[string]any) func(t *testing.T, ev agent.Event) {
	return func(t *testing.T, ev agent.Event) {
		if ev.Kind != agent.EventToolStart && ev.Kind != agent.EventToolEnd {
			return
		}
		var got map[string]any
		if err := json.Unmarshal(ev.Arguments, &got); err != nil {
			t.Errorf("%s: the redacted arguments are no JSON: %v", ev.Kind, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the arguments do not decode to the call's with the token for the secret", ev.Kind)
		}
	}
}

// TestEventsCarryRedactedFields checks the events' other fields: the tool
// call's id, name and arguments on its start and end events, the final
// answer on the turn's end and a fallback model's name.
func TestEventsCarryRedactedFields(t *testing.T) {
	echo := agenttest.NewTool("echo", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) { return agent.TextResult("ok"), nil })
	args := `{"text":"` + testSecret + `","n":1}`
	tests := []struct {
		name  string
		calls []agent.ToolCall
		check func(t *testing.T, ev agent.Event)
	}{
		{
			name:  "arguments",
			calls: []agent.ToolCall{{ID: "c1", Name: "echo", Arguments: args}},
			check: checkArgs(map[string]any{"text": redactor.Token, "n": 1.0}),
		},
		{
			name:  "arguments with escapes",
			calls: []agent.ToolCall{{ID: "c1", Name: "echo", Arguments: `{"text":"` + escapeEvery(testSecret, 3) + `"}`}},
			check: checkArgs(map[string]any{"text": redactor.Token}),
		},
		{
			name:  "call id and tool name",
			calls: []agent.ToolCall{{ID: "id-" + testSecret, Name: "tool-" + testSecret, Arguments: `{}`}},
			check: func(t *testing.T, ev agent.Event) {
				if ev.Kind == agent.EventToolStart && (ev.ToolCallID != "id-"+redactor.Token || ev.ToolName != "tool-"+redactor.Token) {
					t.Errorf("%s: the call's id and name are not redacted", ev.Kind)
				}
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			faux := agenttest.NewFauxProvider(
				agenttest.FauxToolCalls(tt.calls...),
				agenttest.FauxFunc(func(_ context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
					onText("done: " + testSecret)
					return agent.Response{Text: "done: " + testSecret, Model: "backup-" + testSecret}, nil
				}),
			)
			s := openSession(t, newTestAgent(t, faux, agent.WithTools(echo)), agent.SessionOptions{})
			var log eventLog
			res, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, log.add)
			if err != nil {
				t.Fatalf("Prompt: %v", err)
			}
			if want := "done: " + redactor.Token; res.Text != want {
				t.Errorf("the turn's text is not the answer with the token for the secret")
			}
			kinds := map[agent.EventKind]bool{}
			for _, ev := range log.all() {
				kinds[ev.Kind] = true
				tt.check(t, ev)
				if jsonLeaks(t, ev) {
					t.Errorf("a %s event holds the secret", ev.Kind)
				}
				switch ev.Kind {
				case agent.EventTurnEnd:
					if ev.Text != res.Text {
						t.Errorf("the turn_end event's text is not the turn's redacted text")
					}
				case agent.EventModelFallback:
					if ev.Text != "backup-"+redactor.Token {
						t.Errorf("the fallback model's name is not redacted")
					}
				}
			}
			for _, k := range []agent.EventKind{agent.EventToolStart, agent.EventToolEnd, agent.EventModelFallback, agent.EventTurnEnd} {
				if !kinds[k] {
					t.Errorf("no %s event", k)
				}
			}
		})
	}
}

// TestRestartDropsHeldBackText cuts a stream that ends in the secret's
// beginning: the held-back run is dropped with the void stream, so the
// restarted answer shows neither it nor, when it completes the secret, any
// of the secret.
func TestRestartDropsHeldBackText(t *testing.T) {
	red := redactor.New([]string{testSecret})
	for _, again := range []string{testSecret[7:] + " was it", "ing is over"} {
		t.Run(fmt.Sprintf("%d bytes again", len(again)), func(t *testing.T) {
			faux := agenttest.NewFauxProvider(
				agenttest.FauxFunc(func(_ context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
					onText("the key is " + testSecret[:7])
					return agent.Response{}, fmt.Errorf("%w: connection reset", agent.ErrStreamInterrupted)
				}),
				streamed(again),
			)
			s := openSession(t, newTestAgent(t, faux), agent.SessionOptions{})
			var log eventLog
			if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, log.add); err != nil {
				t.Fatalf("Prompt: %v", err)
			}
			var void, shown []string
			restarted := false
			for _, ev := range log.all() {
				switch {
				case ev.Kind == agent.EventStreamRestart:
					restarted = true
				case ev.Kind == agent.EventTextDelta && restarted:
					shown = append(shown, ev.Text)
				case ev.Kind == agent.EventTextDelta:
					void = append(void, ev.Text)
				}
			}
			if !restarted {
				t.Fatal("no stream_restart event")
			}
			if v := strings.Join(void, ""); !strings.HasPrefix("the key is ", v) {
				t.Errorf("the void stream showed %d bytes, want a prefix of the text before the secret's beginning", len(v))
			}
			checkDeltaRun(t, red, shown, again)
		})
	}
}

// TestBridgedCallEndsTheText runs a tool call the way a provider with its
// own tool loop does, while its answer streams: the text before the call,
// held back at its end, is shown before the call starts.
func TestBridgedCallEndsTheText(t *testing.T) {
	echo := agenttest.NewTool("echo", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) { return agent.TextResult("ok"), nil })
	before := "let me look at this" // ends in a byte that could begin the secret
	faux := agenttest.NewFauxProvider(agenttest.FauxFunc(func(ctx context.Context, _ agent.Request, onText func(string)) (agent.Response, error) {
		onText(before)
		if _, err := agent.RunBridgedCall(ctx, before, agenttest.FauxCall("echo", `{}`)); err != nil {
			return agent.Response{}, err
		}
		onText("done")
		return agent.Response{Text: "done"}, nil
	}))
	s := openSession(t, newTestAgent(t, faux, agent.WithTools(echo)), agent.SessionOptions{})
	var log eventLog
	if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, log.add); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	events := joinDeltas(log.all())
	kinds := kindsOf(events)
	want := []agent.EventKind{agent.EventTurnStart, agent.EventTextDelta, agent.EventToolStart, agent.EventToolEnd, agent.EventTextDelta, agent.EventTurnEnd}
	if fmt.Sprint(kinds) != fmt.Sprint(want) {
		t.Fatalf("events %v, want %v", kinds, want)
	}
	if events[1].Text != before || events[4].Text != "done" {
		t.Errorf("texts %q and %q, want %q before the call and done after it", events[1].Text, events[4].Text, before)
	}
}

// TestNoSecretsStreamsDeltasAsTheyCame checks the stream of a host without
// secrets: every delta is emitted as it came, at once, one event each.
func TestNoSecretsStreamsDeltasAsTheyCame(t *testing.T) {
	deltas := []string{"ask for ", "sk-", "test", " ", "and more"}
	a := startAgent(t, agenttest.NewFauxProvider(streamed(deltas...)), redactor.New(nil), agent.WithWorkspace(t.TempDir()))
	s := openSession(t, a, agent.SessionOptions{})
	var log eventLog
	if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, log.add); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	runs := deltaRuns(log.all())
	if len(runs) != 1 || fmt.Sprint(runs[0]) != fmt.Sprint(deltas) {
		t.Errorf("deltas %q, want %q", runs, deltas)
	}
}

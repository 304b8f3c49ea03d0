package agent

import (
	"context"
	"strings"
	"testing"
)

// TestProgressHidesGrowingSecretPrefix is the security suite's
// progress-trickle vector in miniature: a tool that prints a secret a few
// bytes at a time reports a snapshot after each piece. No update event may
// show the secret's beginning while its end has not been printed; the final
// result shows the token.
func TestProgressHidesGrowingSecretPrefix(t *testing.T) {
	trickle := newTool("trickle", "", func(ctx context.Context, call *Call) (Result, error) {
		out := "reading key: "
		for i := 0; i < len(testSecret); i += 3 {
			out += testSecret[i:min(i+3, len(testSecret))]
			call.Progress(Result{Content: []Content{Text(out)}, Details: map[string]any{"tail": out}})
		}
		return TextResult(out + "\ndone"), nil
	})
	faux := NewFauxProvider(FauxToolCalls(FauxCall("trickle", `{}`)), FauxText("ok"))
	a := newTestAgent(t, faux, WithTools(trickle))
	s := openSession(t, a, SessionOptions{ID: "trickle"})

	var events recorder[Event]
	if _, err := s.Prompt(context.Background(), []Content{Text("go")}, events.add); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	updates := 0
	for _, ev := range events.all() {
		if ev.Kind != EventToolUpdate && ev.Kind != EventToolEnd {
			continue
		}
		texts := []string{TextOf(ev.Result.Content)}
		if tail, ok := ev.Result.Details["tail"].(string); ok {
			texts = append(texts, tail)
		}
		for _, text := range texts {
			for k := 4; k <= len(testSecret); k++ {
				if strings.Contains(text, testSecret[:k]) {
					t.Fatalf("a %s event shows %d of the secret's %d bytes", ev.Kind, k, len(testSecret))
				}
			}
		}
		if ev.Kind == EventToolUpdate {
			updates++
		}
		if ev.Kind == EventToolEnd && !strings.Contains(TextOf(ev.Result.Content), "[REDACTED]") {
			t.Error("the final result does not show the token")
		}
	}
	if updates == 0 {
		t.Fatal("no progress update was emitted")
	}
}

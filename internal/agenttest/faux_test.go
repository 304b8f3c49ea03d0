package agenttest

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/agent"
)

func TestFauxProviderPlaysScript(t *testing.T) {
	boom := errors.New("boom")
	f := NewFauxProvider(FauxText("hello there"), FauxToolCalls(FauxCall("bash", `{}`)), FauxError(boom))
	ctx := context.Background()
	req := agent.Request{Model: "m", Messages: []agent.Message{{Role: agent.RoleUser, Content: []agent.Content{agent.Text("hi")}}}}

	var streamed []string
	resp, err := f.Complete(ctx, req, func(d string) { streamed = append(streamed, d) })
	if err != nil || resp.Text != "hello there" || resp.FinishReason != "stop" {
		t.Fatalf("first answer %+v, %v", resp, err)
	}
	if diff := cmp.Diff([]string{"hello ", "there"}, streamed); diff != "" {
		t.Errorf("streamed deltas (-want +got):\n%s", diff)
	}
	resp, err = f.Complete(ctx, req, func(string) {})
	if err != nil || resp.FinishReason != "tool_calls" || len(resp.ToolCalls) != 1 || resp.ToolCalls[0].ID != "faux_call_1" {
		t.Fatalf("second answer %+v, %v", resp, err)
	}
	if _, err := f.Complete(ctx, req, func(string) {}); !errors.Is(err, boom) {
		t.Fatalf("third answer error %v, want the scripted one", err)
	}
	if _, err := f.Complete(ctx, req, func(string) {}); err == nil || !strings.Contains(err.Error(), "no scripted response") {
		t.Fatalf("unscripted answer error %v", err)
	}
	if f.Pending() != 0 {
		t.Errorf("Pending() = %d, want 0", f.Pending())
	}
}

func TestFauxProviderRecordsCopies(t *testing.T) {
	f := NewFauxProvider(FauxText("a"))
	req := agent.Request{Messages: []agent.Message{{Role: agent.RoleUser, Content: []agent.Content{agent.Text("original")}}}}
	if _, err := f.Complete(context.Background(), req, func(string) {}); err != nil {
		t.Fatal(err)
	}
	req.Messages[0].Content[0].Text = "changed"
	if got := agent.TextOf(f.Requests()[0].Messages[0].Content); got != "original" {
		t.Errorf("recorded request says %q; the caller's later change reached it", got)
	}
}

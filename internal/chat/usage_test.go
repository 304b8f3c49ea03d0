package chat

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/openai"
	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/usage"
)

// usageHarness runs a host over the OpenAI adapter against srv, its usage
// recorded to a store in the agent dir, priced by prices and limited by
// limit.
func usageHarness(t *testing.T, srv *openaitest.Server, prices usage.Prices, limit usage.Limit) (*harness, *usage.Store) {
	t.Helper()
	dir := t.TempDir()
	store, err := usage.Open(filepath.Join(dir, usage.FileName))
	if err != nil {
		t.Fatalf("usage.Open: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	provider := openai.NewProvider(openai.Config{APIKey: openAIKey, BaseURL: srv.URL()})
	h := newHarness(t, harnessConfig{
		provider:  provider,
		agentDir:  dir,
		agentOpts: []agent.Option{agent.WithUsageRecorder(UsageRecorder(store, testLogger(t)))},
		opts:      []Option{WithUsage(store, prices, limit)},
	})
	return h, store
}

func TestUsageCommandAndStatus(t *testing.T) {
	srv := openaitest.New(t, openaitest.WithScript(
		openaitest.Text("first answer").WithCachedUsage(1000, 100, 0),
		openaitest.Text("second answer").WithCachedUsage(1200, 50, 1000),
	))
	prices := usage.Prices{"test-model": {Input: 1, Output: 2, Cached: 0.5}}
	h, _ := usageHarness(t, srv, prices, usage.Limit{})
	h.tg.SendText(userID, userID, "one")
	h.waitText(userID, "first answer")
	h.tg.SendText(userID, userID, "two")
	h.waitText(userID, "second answer")
	h.tg.SendText(userID, userID, "/usage")
	got := h.waitText(userID, "Usage of this chat").Visible
	// The last turn: 1,250 tokens; 200 fresh prompt at $1, 1000 cached at
	// $0.50, 50 completion at $2 per million = $0.0008.
	for _, want := range []string{
		"This turn: 1,250 tokens (1,200 prompt, 1,000 of them cached; 50 completion) in 1 request, $0.0008",
		"This session: 2,350 tokens (2,200 prompt, 1,000 of them cached; 150 completion) in 2 requests, $0.0020",
		"Today: 2,350 tokens",
		"Last 30 days: 2,350 tokens",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("/usage lacks %q; it says:\n%s", want, got)
		}
	}
	h.tg.SendText(userID, userID, "/status")
	status := h.waitText(userID, "Session usage:").Visible
	if !strings.Contains(status, "Session usage: 2,350 tokens") {
		t.Errorf("/status shows no session tokens:\n%s", status)
	}
}

func TestDailyLimitRefusesTurns(t *testing.T) {
	srv := openaitest.New(t, openaitest.WithScript(
		openaitest.Text("first answer").WithUsage(900, 200),
	))
	h, _ := usageHarness(t, srv, nil, usage.Limit{Tokens: 1000})
	h.tg.SendText(userID, userID, "one")
	h.waitText(userID, "first answer")
	h.tg.SendText(userID, userID, "two")
	msg := h.waitText(userID, "daily limit").Visible
	if !strings.Contains(msg, "1,000 tokens") {
		t.Errorf("the limit message does not name the limit: %q", msg)
	}
	if n := len(srv.ChatRequests()); n != 1 {
		t.Errorf("the model got %d requests, want 1: the turn over the limit reached it", n)
	}
	// A scheduled job of the chat counts against the same budget.
	if err := h.host.Prompt(context.Background(), "1001", "morning report", "write the report"); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	if got := h.waitText(userID, "morning report: not run.").Visible; !strings.Contains(got, "daily limit") {
		t.Errorf("the refused job's message = %q, want it to name the daily limit", got)
	}
	if n := len(srv.ChatRequests()); n != 1 {
		t.Errorf("the model got %d requests, want 1: the scheduled turn over the limit reached it", n)
	}
	h.tg.SendText(userID, userID, "/usage")
	if got := h.waitText(userID, "Daily limit:").Visible; !strings.Contains(got, "Daily limit: 1,000 tokens (110% used today)") {
		t.Errorf("/usage does not show the limit's use:\n%s", got)
	}
}

// TestUsageReportedCostAndPlanWindows shows, without MODEL_PRICES, the
// cost a provider reports (Claude Code's total_cost_usd) and the plan's
// windows it last reported.
func TestUsageReportedCostAndPlanWindows(t *testing.T) {
	dir := t.TempDir()
	store, err := usage.Open(filepath.Join(dir, usage.FileName))
	if err != nil {
		t.Fatalf("usage.Open: %v", err)
	}
	t.Cleanup(func() { store.Close() })
	provider := agenttest.NewFauxProvider(agenttest.FauxFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		onText("the answer")
		return agent.Response{Text: "the answer", Usage: agent.Usage{PromptTokens: 120, CompletionTokens: 5, TotalTokens: 125, CostUSD: 0.25}}, nil
	}))
	resets := time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)
	h := newHarness(t, harnessConfig{
		provider:  provider,
		agentDir:  dir,
		agentOpts: []agent.Option{agent.WithUsageRecorder(UsageRecorder(store, testLogger(t)))},
		opts: []Option{WithUsage(store, nil, usage.Limit{}), WithPlanWindows(func() []PlanWindow {
			return []PlanWindow{{Name: "seven_day", Status: "allowed_warning", Utilization: 0.8, Resets: resets},
				{Name: "five_hour", Status: "allowed", Utilization: 0.25, Resets: resets}}
		})},
	})
	h.tg.SendText(userID, userID, "one")
	h.waitText(userID, "the answer")
	h.tg.SendText(userID, userID, "/usage")
	got := h.waitText(userID, "Usage of this chat").Visible
	for _, want := range []string{
		"This turn: 125 tokens (120 prompt, 0 of them cached; 5 completion) in 1 request, $0.25 as the provider reports it",
		"Plan limits, as Claude Code last reported them:\n5-hour window: ok, 25% used, resets ",
		"weekly window: nearly used up, 80% used, resets ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("/usage lacks %q; it says:\n%s", want, got)
		}
	}
}

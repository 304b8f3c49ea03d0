package openai

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/openaitest"
)

// newOpenAI returns an adapter for srv with fast retries.
func newOpenAI(srv *openaitest.Server, idle time.Duration) *Provider {
	return NewProvider(Config{APIKey: "sk-test-key", BaseURL: srv.URL(), RetryBaseDelay: 5 * time.Millisecond, IdleTimeout: idle})
}

func TestOpenAIStreamedText(t *testing.T) {
	srv := openaitest.New(t, openaitest.WithChunkSize(3), openaitest.WithScript(openaitest.Text("Hello, world!").WithUsage(12, 4)))
	var d deltas
	resp, err := newOpenAI(srv, 0).Complete(context.Background(), agent.Request{
		Model: "m", System: "sys",
		Messages: []agent.Message{{Role: agent.RoleUser, Content: []agent.Content{agent.Text("hi"), agent.Image("image/png", []byte{1, 2})}}},
		Tools:    []agent.ToolSpec{{Name: "t", Description: "d"}},
	}, d.add)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "Hello, world!" || len(d.all()) < 3 || strings.Join(d.all(), "") != resp.Text {
		t.Errorf("text %q in %d deltas", resp.Text, len(d.all()))
	}
	if resp.Usage.PromptTokens != 12 || resp.Usage.CompletionTokens != 4 || resp.FinishReason != "stop" {
		t.Errorf("usage %+v finish %q", resp.Usage, resp.FinishReason)
	}
	req := srv.ChatRequests()[0]
	if !req.Stream || !req.IncludeUsage || req.Model != "m" {
		t.Errorf("request stream=%v include_usage=%v model=%q", req.Stream, req.IncludeUsage, req.Model)
	}
	if req.Messages[0].Role != "system" || req.Messages[0].Text() != "sys" {
		t.Errorf("first message %+v", req.Messages[0])
	}
	parts := req.Messages[1].Parts
	if len(parts) != 2 || parts[1].Type != "image_url" || parts[1].ImageURL != "data:image/png;base64,AQI=" {
		t.Errorf("user parts %+v", parts)
	}
	if len(req.Tools) != 1 || !strings.Contains(string(req.Tools[0].Parameters), `"object"`) {
		t.Errorf("tools %+v", req.Tools)
	}
}

func TestOpenAIToolCallsAcrossChunks(t *testing.T) {
	calls := []openaitest.ToolCall{
		{ID: "call_a", Name: "bash", Arguments: `{"command":"ls -la /tmp"}`},
		{ID: "call_b", Name: "read", Arguments: `{"path":"/etc/hosts","limit":10}`},
	}
	srv := openaitest.New(t, openaitest.WithChunkSize(2), openaitest.WithScript(openaitest.TextAndToolCalls("ok", calls...)))
	resp, err := newOpenAI(srv, 0).Complete(context.Background(), agent.Request{Model: "m"}, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	want := []agent.ToolCall{
		{ID: "call_a", Name: "bash", Arguments: `{"command":"ls -la /tmp"}`},
		{ID: "call_b", Name: "read", Arguments: `{"path":"/etc/hosts","limit":10}`},
	}
	if diff := cmp.Diff(want, resp.ToolCalls); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
	if resp.FinishReason != "tool_calls" || resp.Text != "ok" {
		t.Errorf("finish %q text %q", resp.FinishReason, resp.Text)
	}
}

func TestOpenAIMessageMapping(t *testing.T) {
	srv := openaitest.New(t, openaitest.WithScript(openaitest.Text("ok")))
	_, err := newOpenAI(srv, 0).Complete(context.Background(), agent.Request{Model: "m", Messages: []agent.Message{
		{Role: agent.RoleUser, Content: []agent.Content{agent.Text("look")}},
		{Role: agent.RoleAssistant, ToolCalls: []agent.ToolCall{{ID: "1", Name: "shot", Arguments: "{}"}, {ID: "2", Name: "shot", Arguments: "{}"}}},
		{Role: agent.RoleTool, ToolCallID: "1", ToolName: "shot", Content: []agent.Content{agent.Text("a"), agent.Image("image/png", []byte{9})}},
		{Role: agent.RoleTool, ToolCallID: "2", ToolName: "shot", Content: nil},
		{Role: agent.RoleAssistant, Content: []agent.Content{agent.Text("seen")}},
	}}, func(string) {})
	if err != nil {
		t.Fatal(err)
	}
	var roles []string
	for _, m := range srv.ChatRequests()[0].Messages {
		roles = append(roles, m.Role)
	}
	if diff := cmp.Diff([]string{"user", "assistant", "tool", "tool", "user", "assistant"}, roles); diff != "" {
		t.Errorf("roles (-want +got):\n%s", diff)
	}
	msgs := srv.ChatRequests()[0].Messages
	if len(msgs[1].ToolCalls) != 2 || msgs[2].ToolCallID != "1" || msgs[3].Text() == "" {
		t.Errorf("assistant/tool mapping wrong: %+v", msgs[1:4])
	}
	if p := msgs[4].Parts; len(p) != 2 || p[1].ImageURL != "data:image/png;base64,CQ==" {
		t.Errorf("image user message parts %+v", p)
	}
}

func TestOpenAIErrors(t *testing.T) {
	// The retries wait 5ms, 10ms, 20ms (RetryBaseDelay doubled) unless the
	// provider asks for a delay.
	backoff := []time.Duration{5 * time.Millisecond, 10 * time.Millisecond, 20 * time.Millisecond}
	tests := []struct {
		name        string
		script      []openaitest.Response
		wantStatus  int
		wantText    string
		wantReqs    int
		wantDelays  []time.Duration
		contextLong bool
	}{
		{"429 with Retry-After then success", []openaitest.Response{openaitest.RateLimited("1"), openaitest.Text("ok")}, 0, "", 2, []time.Duration{time.Second}, false},
		{"500 three times then success", []openaitest.Response{
			openaitest.StatusError(500, "down"), openaitest.StatusError(502, "down"), openaitest.StatusError(503, "down"), openaitest.Text("ok"),
		}, 0, "", 4, backoff, false},
		{"500 four times", []openaitest.Response{
			openaitest.StatusError(500, "the server broke"), openaitest.StatusError(500, "the server broke"),
			openaitest.StatusError(500, "the server broke"), openaitest.StatusError(500, "the server broke"),
		}, 500, "status 500: the server broke", 4, backoff, false},
		{"400 not retried", []openaitest.Response{openaitest.StatusError(400, "bad request")}, 400, "bad request", 1, nil, false},
		{"context too long", []openaitest.Response{openaitest.ContextLengthExceeded()}, 400, "maximum context length", 1, nil, true},
		{"broken stream", []openaitest.Response{openaitest.Text("partial answer here").Fail(openaitest.FailAbort, 2)}, 0, "", 1, nil, false},
		{"end without done", []openaitest.Response{openaitest.Text("partial answer here").Fail(openaitest.FailEndWithoutDone, 2)}, 0, "ended before", 1, nil, false},
		{"invalid json", []openaitest.Response{openaitest.Text("partial answer here").Fail(openaitest.FailInvalidJSON, 1)}, 0, "", 1, nil, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.New(t, openaitest.WithScript(tt.script...))
			p := newOpenAI(srv, 0)
			var delays []time.Duration
			p.sleep = func(_ context.Context, d time.Duration) error {
				delays = append(delays, d)
				return nil
			}
			resp, err := p.Complete(context.Background(), agent.Request{Model: "m"}, func(string) {})
			if n := len(srv.ChatRequests()); n != tt.wantReqs {
				t.Errorf("server got %d requests, want %d", n, tt.wantReqs)
			}
			if diff := cmp.Diff(tt.wantDelays, delays); diff != "" {
				t.Errorf("delays before the retries (-want +got):\n%s", diff)
			}
			success := tt.wantStatus == 0 && tt.wantText == "" && !strings.Contains(tt.name, "stream") && !strings.Contains(tt.name, "json")
			if success {
				if err != nil || resp.Text != "ok" {
					t.Fatalf("Complete = %q, %v", resp.Text, err)
				}
				return
			}
			if err == nil {
				t.Fatal("Complete succeeded, want an error")
			}
			if tt.wantText != "" && !strings.Contains(err.Error(), tt.wantText) {
				t.Errorf("error %q does not contain %q", err, tt.wantText)
			}
			var pe *agent.ProviderError
			if tt.wantStatus != 0 && (!errors.As(err, &pe) || pe.StatusCode != tt.wantStatus) {
				t.Errorf("error %v is not a ProviderError with status %d", err, tt.wantStatus)
			}
			if errors.Is(err, agent.ErrContextTooLong) != tt.contextLong {
				t.Errorf("errors.Is(err, ErrContextTooLong) = %v, want %v", !tt.contextLong, tt.contextLong)
			}
		})
	}
}

func TestOpenAICancelAndStall(t *testing.T) {
	t.Run("cancel mid-stream", func(t *testing.T) {
		srv := openaitest.New(t, openaitest.WithScript(openaitest.Text("some text that stalls").Fail(openaitest.FailStall, 2)))
		ctx, cancel := context.WithCancel(context.Background())
		var once sync.Once
		_, err := newOpenAI(srv, 0).Complete(ctx, agent.Request{Model: "m"}, func(string) { once.Do(cancel) })
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Complete = %v, want context.Canceled", err)
		}
	})
	t.Run("idle timeout", func(t *testing.T) {
		srv := openaitest.New(t, openaitest.WithScript(openaitest.Text("some text that stalls").Fail(openaitest.FailStall, 1)))
		// The deadline only guards against a hang: the idle timeout must
		// end the request long before it.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, err := newOpenAI(srv, 200*time.Millisecond).Complete(ctx, agent.Request{Model: "m"}, func(string) {})
		if err == nil || !strings.Contains(err.Error(), "no data") || ctx.Err() != nil {
			t.Errorf("Complete = %v, want an idle timeout", err)
		}
	})
}

func TestRetryAfterParsing(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		after, afterMS string
		want           time.Duration
	}{
		{"", "", 0},
		{"2", "", 2 * time.Second},
		{"", "1500", 1500 * time.Millisecond},
		{now.Add(3 * time.Second).Format(http.TimeFormat), "", 3 * time.Second},
		{"garbage", "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.after+"/"+tt.afterMS, func(t *testing.T) {
			h := &capturedHeaders{after: tt.after, afterMS: tt.afterMS}
			if got := h.retryAfter(now); got != tt.want {
				t.Errorf("retryAfter = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestLoopOverOpenAI runs a whole turn with a tool through the adapter
// and the fake server, checking that the secret never reaches the wire.
func TestLoopOverOpenAI(t *testing.T) {
	srv := openaitest.New(t, openaitest.WithScript(
		openaitest.ToolCalls(openaitest.ToolCall{ID: "c1", Name: "cat", Arguments: `{}`}),
		openaitest.Text("done"),
	))
	cat := newTool("cat", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) {
		return agent.TextResult("token: " + testSecret), nil
	})
	a := newTestAgent(t, newOpenAI(srv, 0), agent.WithTools(cat))
	s := openSession(t, a, agent.SessionOptions{})
	res, err := s.Prompt(context.Background(), []agent.Content{agent.Text("show")}, nil)
	if err != nil || res.Text != "done" {
		t.Fatalf("Prompt = %q, %v", res.Text, err)
	}
	for i, body := range srv.AllBodies() {
		if leaks(string(body)) {
			t.Errorf("request %d holds the secret", i)
		}
	}
	if got := srv.ChatRequests()[1].LastMessage().Text(); !strings.Contains(got, "[REDACTED]") {
		t.Errorf("tool message %q holds no redaction token", got)
	}
}

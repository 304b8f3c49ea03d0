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
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/openaitest"
)

// newOpenAI returns an adapter for srv with fast retries.
func newOpenAI(srv *openaitest.Server, idle time.Duration) *Provider {
	return NewProvider(Config{APIKey: "sk-test-key", BaseURL: srv.URL(), RetryBaseDelay: 5 * time.Millisecond, IdleTimeout: idle})
}

func TestOpenAIStreamedText(t *testing.T) {
	srv := openaitest.New(t, openaitest.WithChunkSize(3), openaitest.WithScript(openaitest.Text("Hello, world!").WithCachedUsage(12, 4, 8)))
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
	if resp.Usage.PromptTokens != 12 || resp.Usage.CompletionTokens != 4 || resp.Usage.CachedTokens != 8 || resp.FinishReason != "stop" {
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
	ok := openaitest.Text("ok")
	text := openaitest.Text("partial answer here")
	call := openaitest.ToolCalls(openaitest.ToolCall{ID: "c1", Name: "bash", Arguments: `{"command":"ls -la"}`})
	tests := []struct {
		name   string
		script []openaitest.Response
		// wantStatus is the ProviderError's status (0: none needed);
		// wantText a part of the error; success wants "ok".
		success     bool
		wantStatus  int
		wantText    string
		wantReqs    int
		wantDelays  []time.Duration
		contextLong bool
		interrupted bool
	}{
		{name: "429 with Retry-After then success", script: []openaitest.Response{openaitest.RateLimited("1"), ok},
			success: true, wantReqs: 2, wantDelays: []time.Duration{time.Second}},
		{name: "429 asking for longer than MaxRetryDelay fails at once", script: []openaitest.Response{openaitest.RateLimited("120"), ok},
			wantStatus: 429, wantText: "asks to wait 2m0s", wantReqs: 1},
		{name: "500 three times then success", script: []openaitest.Response{
			openaitest.StatusError(500, "down"), openaitest.StatusError(502, "down"), openaitest.StatusError(503, "down"), ok,
		}, success: true, wantReqs: 4, wantDelays: backoff},
		{name: "500 four times", script: []openaitest.Response{
			openaitest.StatusError(500, "the server broke"), openaitest.StatusError(500, "the server broke"),
			openaitest.StatusError(500, "the server broke"), openaitest.StatusError(500, "the server broke"),
		}, wantStatus: 500, wantText: "status 500: the server broke", wantReqs: 4, wantDelays: backoff},
		{name: "400 not retried", script: []openaitest.Response{openaitest.StatusError(400, "bad request")},
			wantStatus: 400, wantText: "bad request", wantReqs: 1},
		{name: "context too long", script: []openaitest.Response{openaitest.ContextLengthExceeded()},
			wantStatus: 400, wantText: "maximum context length", wantReqs: 1, contextLong: true},
		{name: "connection reset before the answer then success", script: []openaitest.Response{text.Fail(openaitest.FailReset, 0), ok},
			success: true, wantReqs: 2, wantDelays: backoff[:1]},
		{name: "connection reset four times", script: []openaitest.Response{
			text.Fail(openaitest.FailReset, 0), text.Fail(openaitest.FailReset, 0), text.Fail(openaitest.FailReset, 0), text.Fail(openaitest.FailReset, 0),
		}, wantText: "connection failed", wantReqs: 4, wantDelays: backoff},
		{name: "stream cut before any text then success", script: []openaitest.Response{text.Fail(openaitest.FailAbort, 1), ok},
			success: true, wantReqs: 2, wantDelays: backoff[:1]},
		{name: "error event before any text then success", script: []openaitest.Response{text.Fail(openaitest.FailErrorEvent, 1), ok},
			success: true, wantReqs: 2, wantDelays: backoff[:1]},
		{name: "invalid json before any text then success", script: []openaitest.Response{text.Fail(openaitest.FailInvalidJSON, 1), ok},
			success: true, wantReqs: 2, wantDelays: backoff[:1]},
		{name: "stream cut after text", script: []openaitest.Response{text.Fail(openaitest.FailAbort, 2)},
			wantReqs: 1, interrupted: true},
		{name: "reset after text", script: []openaitest.Response{text.Fail(openaitest.FailReset, 2)},
			wantReqs: 1, interrupted: true},
		{name: "end without done after text", script: []openaitest.Response{text.Fail(openaitest.FailEndWithoutDone, 2)},
			wantText: "ended before", wantReqs: 1, interrupted: true},
		{name: "stream cut inside a tool call", script: []openaitest.Response{call.Fail(openaitest.FailAbort, 3)},
			wantReqs: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.New(t, openaitest.WithScript(tt.script...))
			p := newOpenAI(srv, 0)
			var delays []time.Duration
			p.sleep = func(_ context.Context, d time.Duration) bool {
				delays = append(delays, d)
				return true
			}
			resp, err := p.Complete(context.Background(), agent.Request{Model: "m"}, func(string) {})
			if n := len(srv.ChatRequests()); n != tt.wantReqs {
				t.Errorf("server got %d requests, want %d", n, tt.wantReqs)
			}
			if diff := cmp.Diff(tt.wantDelays, delays); diff != "" {
				t.Errorf("delays before the retries (-want +got):\n%s", diff)
			}
			if tt.success {
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
			if strings.Contains(err.Error(), srv.URL()) || strings.Contains(err.Error(), "http://") {
				t.Errorf("error %q names the provider's URL", err)
			}
			var pe *agent.ProviderError
			if tt.wantStatus != 0 && (!errors.As(err, &pe) || pe.StatusCode != tt.wantStatus) {
				t.Errorf("error %v is not a ProviderError with status %d", err, tt.wantStatus)
			}
			if errors.Is(err, agent.ErrContextTooLong) != tt.contextLong {
				t.Errorf("errors.Is(err, ErrContextTooLong) = %v, want %v", !tt.contextLong, tt.contextLong)
			}
			if errors.Is(err, agent.ErrStreamInterrupted) != tt.interrupted {
				t.Errorf("errors.Is(%v, ErrStreamInterrupted) = %v, want %v", err, !tt.interrupted, tt.interrupted)
			}
		})
	}
}

func TestOpenAIFallbackModels(t *testing.T) {
	down := openaitest.StatusError(503, "overloaded")
	tests := []struct {
		name      string
		script    []openaitest.Response
		wantModel string
		wantErr   bool
		wantAsked []string
	}{
		{name: "primary answers", script: []openaitest.Response{openaitest.Text("ok")},
			wantModel: "", wantAsked: []string{"main"}},
		{name: "primary down, first fallback answers", script: []openaitest.Response{down, down, openaitest.Text("ok")},
			wantModel: "fb1", wantAsked: []string{"main", "main", "fb1"}},
		{name: "primary and first fallback down", script: []openaitest.Response{down, down, down, down, openaitest.Text("ok")},
			wantModel: "fb2", wantAsked: []string{"main", "main", "fb1", "fb1", "fb2"}},
		{name: "all down", script: []openaitest.Response{down, down, down, down, down, down},
			wantErr: true, wantAsked: []string{"main", "main", "fb1", "fb1", "fb2", "fb2"}},
		{name: "a 400 is not a reason to fall back", script: []openaitest.Response{openaitest.StatusError(400, "bad")},
			wantErr: true, wantAsked: []string{"main"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.New(t, openaitest.WithScript(tt.script...))
			p := NewProvider(Config{APIKey: "sk-test-key", BaseURL: srv.URL(), MaxRetries: 1,
				FallbackModels: []string{"fb1", "main", "fb2"}})
			p.sleep = func(context.Context, time.Duration) bool { return true }
			resp, err := p.Complete(context.Background(), agent.Request{Model: "main"}, func(string) {})
			if (err != nil) != tt.wantErr {
				t.Fatalf("Complete error = %v, want error %v", err, tt.wantErr)
			}
			if resp.Model != tt.wantModel {
				t.Errorf("Response.Model = %q, want %q", resp.Model, tt.wantModel)
			}
			var asked []string
			for _, r := range srv.ChatRequests() {
				asked = append(asked, r.Model)
			}
			if diff := cmp.Diff(tt.wantAsked, asked); diff != "" {
				t.Errorf("models asked (-want +got):\n%s", diff)
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
		p := newOpenAI(srv, 200*time.Millisecond)
		p.cfg.MaxRetries = 0 // an idle request is retried like any other
		_, err := p.Complete(ctx, agent.Request{Model: "m"}, func(string) {})
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
	cat := agenttest.NewTool("cat", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) {
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

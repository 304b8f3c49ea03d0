package openaitest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	openai "github.com/sashabaranov/go-openai"

	"github.com/volcanic/telegram-agent/internal/openaitest"
)

func TestStreamedText(t *testing.T) {
	tests := []struct {
		name         string
		opts         []openaitest.Option
		response     openaitest.Response
		includeUsage bool
		wantDeltas   int
		wantUsage    *openai.Usage
	}{
		{
			name:       "default chunk size",
			response:   openaitest.Text("Hello, world!"),
			wantDeltas: 4,
		},
		{
			name:       "server chunk size one rune",
			opts:       []openaitest.Option{openaitest.WithChunkSize(1)},
			response:   openaitest.Text("héllo"),
			wantDeltas: 5,
		},
		{
			name:       "response chunk size wins",
			opts:       []openaitest.Option{openaitest.WithChunkSize(1)},
			response:   openaitest.Response{Text: "Hello, world!", ChunkSize: 100},
			wantDeltas: 1,
		},
		{
			name:         "usage when requested",
			response:     openaitest.Text("Hello, world!").WithUsage(12, 3),
			includeUsage: true,
			wantDeltas:   4,
			wantUsage:    &openai.Usage{PromptTokens: 12, CompletionTokens: 3, TotalTokens: 15},
		},
		{
			name:         "cached prompt tokens",
			response:     openaitest.Text("Hello, world!").WithCachedUsage(12, 3, 8),
			includeUsage: true,
			wantDeltas:   4,
			wantUsage: &openai.Usage{PromptTokens: 12, CompletionTokens: 3, TotalTokens: 15,
				PromptTokensDetails: &openai.PromptTokensDetails{CachedTokens: 8}},
		},
		{
			name:       "no usage unless requested",
			response:   openaitest.Text("Hello, world!").WithUsage(12, 3),
			wantDeltas: 4,
		},
		{
			name:       "chunk delay",
			opts:       []openaitest.Option{openaitest.WithChunkDelay(time.Millisecond)},
			response:   openaitest.Text("Hello, world!"),
			wantDeltas: 4,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.New(t, append(tt.opts, openaitest.WithScript(tt.response))...)
			req := chatRequest("hi")
			if tt.includeUsage {
				req.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
			}
			got := streamAll(t, srv, req)
			want := streamResult{
				Text:         tt.response.Text,
				Deltas:       tt.wantDeltas,
				FinishReason: openai.FinishReasonStop,
				Usage:        tt.wantUsage,
				Headers:      map[int]int{},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("stream (-want +got):\n%s", diff)
			}
		})
	}
}

func TestStreamedToolCalls(t *testing.T) {
	calls := []openaitest.ToolCall{
		{ID: "call_1", Name: "bash", Arguments: `{"command":"ls -la /tmp","timeout":30}`},
		{Name: "read", Arguments: `{"path":"notes/été.md"}`},
	}
	tests := []struct {
		name      string
		response  openaitest.Response
		chunkSize int
		wantText  string
	}{
		{name: "two calls chunk size 1", response: openaitest.ToolCalls(calls...), chunkSize: 1},
		{name: "two calls chunk size 7", response: openaitest.ToolCalls(calls...), chunkSize: 7},
		{name: "text then calls", response: openaitest.TextAndToolCalls("Let me look.", calls...), chunkSize: 5, wantText: "Let me look."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.New(t, openaitest.WithChunkSize(tt.chunkSize), openaitest.WithScript(tt.response))
			req := chatRequest("list /tmp")
			req.Tools = []openai.Tool{{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{Name: "bash"}}}
			got := streamAll(t, srv, req)
			wantCalls := []openaitest.ToolCall{calls[0], calls[1]}
			wantCalls[1].ID = "call_fake_1_1"
			if diff := cmp.Diff(wantCalls, got.ToolCalls); diff != "" {
				t.Errorf("tool calls (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(map[int]int{0: 1, 1: 1}, got.Headers); diff != "" {
				t.Errorf("chunks carrying an id per call (-want +got):\n%s", diff)
			}
			if got.Text != tt.wantText {
				t.Errorf("text = %q, want %q", got.Text, tt.wantText)
			}
			if got.FinishReason != openai.FinishReasonToolCalls {
				t.Errorf("finish reason = %q, want %q", got.FinishReason, openai.FinishReasonToolCalls)
			}
		})
	}
}

func TestNonStreamed(t *testing.T) {
	call := openaitest.ToolCall{ID: "call_9", Name: "write", Arguments: `{"path":"a","content":"b"}`}
	tests := []struct {
		name     string
		response openaitest.Response
		want     openai.ChatCompletionMessage
		finish   openai.FinishReason
	}{
		{
			name:     "text",
			response: openaitest.Text("done"),
			want:     openai.ChatCompletionMessage{Role: "assistant", Content: "done"},
			finish:   openai.FinishReasonStop,
		},
		{
			name:     "tool call",
			response: openaitest.ToolCalls(call),
			want: openai.ChatCompletionMessage{Role: "assistant", ToolCalls: []openai.ToolCall{{
				ID: "call_9", Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: "write", Arguments: call.Arguments},
			}}},
			finish: openai.FinishReasonToolCalls,
		},
		{
			name:     "text and tool call",
			response: openaitest.TextAndToolCalls("writing", call),
			want: openai.ChatCompletionMessage{Role: "assistant", Content: "writing", ToolCalls: []openai.ToolCall{{
				ID: "call_9", Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: "write", Arguments: call.Arguments},
			}}},
			finish: openai.FinishReasonToolCalls,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.New(t, openaitest.WithScript(tt.response.WithUsage(7, 2)))
			resp, err := newClient(srv).CreateChatCompletion(testContext(t), chatRequest("hi"))
			if err != nil {
				t.Fatalf("CreateChatCompletion: %v", err)
			}
			if len(resp.Choices) != 1 {
				t.Fatalf("got %d choices, want 1", len(resp.Choices))
			}
			if diff := cmp.Diff(tt.want, resp.Choices[0].Message); diff != "" {
				t.Errorf("message (-want +got):\n%s", diff)
			}
			if resp.Choices[0].FinishReason != tt.finish {
				t.Errorf("finish reason = %q, want %q", resp.Choices[0].FinishReason, tt.finish)
			}
			wantUsage := openai.Usage{PromptTokens: 7, CompletionTokens: 2, TotalTokens: 9}
			if diff := cmp.Diff(wantUsage, resp.Usage); diff != "" {
				t.Errorf("usage (-want +got):\n%s", diff)
			}
		})
	}
}

func TestErrors(t *testing.T) {
	tests := []struct {
		name           string
		opts           []openaitest.Option
		stream         bool
		want           *openai.APIError
		wantRetryAfter string
	}{
		{
			name:   "rate limited with retry-after, streamed",
			opts:   []openaitest.Option{openaitest.WithScript(openaitest.RateLimited("7"))},
			stream: true,
			want: &openai.APIError{
				Code: "rate_limit_exceeded", Message: "Rate limit reached for requests. Please try again later.",
				Type: "requests", HTTPStatus: "429 Too Many Requests", HTTPStatusCode: 429,
			},
			wantRetryAfter: "7",
		},
		{
			name: "rate limited with retry-after, not streamed",
			opts: []openaitest.Option{openaitest.WithScript(openaitest.RateLimited("7"))},
			want: &openai.APIError{
				Code: "rate_limit_exceeded", Message: "Rate limit reached for requests. Please try again later.",
				Type: "requests", HTTPStatus: "429 Too Many Requests", HTTPStatusCode: 429,
			},
			wantRetryAfter: "7",
		},
		{
			name:   "server error",
			opts:   []openaitest.Option{openaitest.WithScript(openaitest.StatusError(500, "The server had an error"))},
			stream: true,
			// go-openai decodes the "code": null OpenAI sends as int 0.
			want: &openai.APIError{
				Code: 0, Message: "The server had an error", Type: "server_error",
				HTTPStatus: "500 Internal Server Error", HTTPStatusCode: 500,
			},
		},
		{
			name:   "context length exceeded",
			opts:   []openaitest.Option{openaitest.WithScript(openaitest.ContextLengthExceeded())},
			stream: true,
			want: &openai.APIError{
				Code: "context_length_exceeded",
				Message: "This model's maximum context length is 128000 tokens. However, your messages resulted in " +
					"131072 tokens. Please reduce the length of the messages.",
				Param: ptr("messages"), Type: "invalid_request_error",
				HTTPStatus: "400 Bad Request", HTTPStatusCode: 400,
			},
		},
		{
			name:   "nothing scripted",
			opts:   []openaitest.Option{openaitest.AllowUnscripted()},
			stream: true,
			want: &openai.APIError{
				Code: 0, Message: openaitest.NoScriptedResponse, Type: "server_error",
				HTTPStatus: "500 Internal Server Error", HTTPStatusCode: 500,
			},
		},
		{
			name: "wrong api key",
			opts: []openaitest.Option{openaitest.WithAPIKey("sk-other"), openaitest.WithScript(openaitest.Text("x"))},
			want: &openai.APIError{
				Code: "invalid_api_key",
				Message: "Incorrect API key provided. You can find your API key at " +
					"https://platform.openai.com/account/api-keys.",
				Type: "invalid_request_error", HTTPStatus: "401 Unauthorized", HTTPStatusCode: 401,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.New(t, tt.opts...)
			transport := &retryAfterTransport{base: http.DefaultTransport}
			cfg := openai.DefaultConfig(testKey)
			cfg.BaseURL = srv.URL()
			cfg.HTTPClient = &http.Client{Transport: transport}
			client := openai.NewClientWithConfig(cfg)
			var err error
			if tt.stream {
				var stream *openai.ChatCompletionStream
				stream, err = client.CreateChatCompletionStream(testContext(t), chatRequest("hi"))
				if err == nil {
					stream.Close()
				}
			} else {
				_, err = client.CreateChatCompletion(testContext(t), chatRequest("hi"))
			}
			var apiErr *openai.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("error = %v, want an *openai.APIError", err)
			}
			if diff := cmp.Diff(tt.want, apiErr); diff != "" {
				t.Errorf("APIError (-want +got):\n%s", diff)
			}
			if got := transport.lastRetryAfter(); got != tt.wantRetryAfter {
				t.Errorf("Retry-After = %q, want %q", got, tt.wantRetryAfter)
			}
		})
	}
}

func TestBrokenStream(t *testing.T) {
	tests := []struct {
		name       string
		response   openaitest.Response
		wantErr    bool
		wantText   string
		wantFinish openai.FinishReason
		wantAPIErr bool
	}{
		{
			name:     "connection dropped",
			response: openaitest.Text("Hello, world!").Fail(openaitest.FailAbort, 2),
			wantErr:  true,
			wantText: "Hell",
		},
		{
			name:     "invalid json",
			response: openaitest.Text("Hello, world!").Fail(openaitest.FailInvalidJSON, 3),
			wantErr:  true,
			wantText: "Hello, w",
		},
		{
			name:     "ends without done looks like a clean end without finish reason",
			response: openaitest.Text("Hello, world!").Fail(openaitest.FailEndWithoutDone, 2),
			wantText: "Hell",
		},
		{
			name:       "error event",
			response:   openaitest.Text("Hello, world!").Fail(openaitest.FailErrorEvent, 2),
			wantErr:    true,
			wantText:   "Hell",
			wantAPIErr: true,
		},
		{
			name:     "connection reset mid-stream",
			response: openaitest.Text("Hello, world!").Fail(openaitest.FailReset, 2),
			wantErr:  true,
			wantText: "Hell",
		},
		{
			name:       "failure after every chunk still withholds done",
			response:   openaitest.Text("Hi").Fail(openaitest.FailAbort, 100),
			wantErr:    true,
			wantText:   "Hi",
			wantFinish: openai.FinishReasonStop,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.New(t, openaitest.WithScript(tt.response))
			stream, err := newClient(srv).CreateChatCompletionStream(testContext(t), chatRequest("hi"))
			if err != nil {
				t.Fatalf("CreateChatCompletionStream: %v", err)
			}
			defer stream.Close()
			got, err := collect(stream)
			if (err != nil) != tt.wantErr {
				t.Errorf("collect error = %v, want error: %v", err, tt.wantErr)
			}
			var apiErr *openai.APIError
			if errors.As(err, &apiErr) != tt.wantAPIErr {
				t.Errorf("collect error = %v, want an *openai.APIError: %v", err, tt.wantAPIErr)
			}
			if got.Text != tt.wantText || got.FinishReason != tt.wantFinish {
				t.Errorf("got text %q finish %q, want %q finish %q", got.Text, got.FinishReason, tt.wantText, tt.wantFinish)
			}
		})
	}
}

func TestBrokenNonStreamed(t *testing.T) {
	failures := []openaitest.Failure{
		openaitest.FailAbort, openaitest.FailEndWithoutDone, openaitest.FailInvalidJSON,
		openaitest.FailStall, openaitest.FailErrorEvent, openaitest.FailReset,
	}
	for _, f := range failures {
		t.Run(f.String(), func(t *testing.T) {
			srv := openaitest.New(t, openaitest.WithScript(openaitest.Text("Hello, world!").Fail(f, 0)))
			ctx, cancel := context.WithTimeout(testContext(t), 200*time.Millisecond)
			defer cancel()
			if _, err := newClient(srv).CreateChatCompletion(ctx, chatRequest("hi")); err == nil {
				t.Error("CreateChatCompletion succeeded, want an error")
			}
		})
	}
}

func TestResetBeforeAnswer(t *testing.T) {
	srv := openaitest.New(t, openaitest.WithScript(openaitest.Text("Hello").Fail(openaitest.FailReset, 0)))
	_, err := newClient(srv).CreateChatCompletionStream(testContext(t), chatRequest("hi"))
	if !errors.Is(err, syscall.ECONNRESET) && !errors.Is(err, io.EOF) {
		t.Errorf("CreateChatCompletionStream = %v, want a connection reset", err)
	}
	if n := len(srv.ChatRequests()); n != 1 {
		t.Errorf("the server recorded %d requests, want 1", n)
	}
}

func TestStalledStream(t *testing.T) {
	tests := []struct {
		name    string
		release func(cancel func(), srv *openaitest.Server)
	}{
		{name: "context cancelled", release: func(cancel func(), _ *openaitest.Server) { cancel() }},
		{name: "server closed", release: func(_ func(), srv *openaitest.Server) { srv.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := openaitest.New(t, openaitest.WithScript(openaitest.Text("Hello, world!").Fail(openaitest.FailStall, 2)))
			ctx, cancel := context.WithCancel(testContext(t))
			defer cancel()
			stream, err := newClient(srv).CreateChatCompletionStream(ctx, chatRequest("hi"))
			if err != nil {
				t.Fatalf("CreateChatCompletionStream: %v", err)
			}
			defer stream.Close()
			for range 2 {
				if _, err := stream.Recv(); err != nil {
					t.Fatalf("Recv before the stall: %v", err)
				}
			}
			done := make(chan error, 1)
			go func() {
				_, err := stream.Recv()
				done <- err
			}()
			select {
			case err := <-done:
				t.Fatalf("Recv returned %v before the stall was released", err)
			case <-time.After(50 * time.Millisecond):
			}
			tt.release(cancel, srv)
			select {
			case err := <-done:
				if err == nil || errors.Is(err, io.EOF) {
					t.Errorf("Recv after release = %v, want an error other than io.EOF", err)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("Recv still blocked after release")
			}
		})
	}
}

func TestResponder(t *testing.T) {
	srv := openaitest.New(t, openaitest.WithScript(openaitest.Text("scripted first")))
	srv.Handle(func(req openaitest.ChatRequest) openaitest.Response {
		last := req.LastMessage()
		if last.Role == openai.ChatMessageRoleTool {
			return openaitest.Text("done: " + last.Text())
		}
		return openaitest.ToolCalls(openaitest.ToolCall{ID: "call_a", Name: "bash", Arguments: `{"command":"echo hi"}`})
	})
	client := newClient(srv)
	ctx := testContext(t)

	var got []string
	msgs := []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: "go"}}
	for range 3 {
		resp, err := client.CreateChatCompletion(ctx, openai.ChatCompletionRequest{Model: testModel, Messages: msgs})
		if err != nil {
			t.Fatalf("CreateChatCompletion: %v", err)
		}
		m := resp.Choices[0].Message
		msgs = append(msgs, m)
		got = append(got, m.Content)
		for _, tc := range m.ToolCalls {
			got = append(got, tc.Function.Name+" "+tc.Function.Arguments)
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, ToolCallID: tc.ID, Content: "hi"})
		}
	}
	want := []string{"scripted first", "", `bash {"command":"echo hi"}`, "done: hi"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("conversation (-want +got):\n%s", diff)
	}
	if srv.Pending() != 0 {
		t.Errorf("Pending() = %d, want 0", srv.Pending())
	}
}

func TestUnscriptedFailsTheTest(t *testing.T) {
	tb := &fakeTB{TB: t}
	srv := openaitest.New(tb)
	_, err := newClient(srv).CreateChatCompletion(testContext(t), chatRequest("hi"))
	var apiErr *openai.APIError
	if !errors.As(err, &apiErr) || apiErr.Message != openaitest.NoScriptedResponse {
		t.Errorf("error = %v, want the APIError %q", err, openaitest.NoScriptedResponse)
	}
	if tb.errorCount() != 1 {
		t.Errorf("server reported %d test errors, want 1", tb.errorCount())
	}
}

func ptr[T any](v T) *T { return &v }

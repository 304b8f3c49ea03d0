package openaitest_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/volcanic/telegram-agent/internal/openaitest"
)

// testKey is the API key the tests' clients send.
const testKey = "sk-test-not-a-real-key"

// testModel is the model the tests ask for.
const testModel = "gpt-4o-mini"

// newClient returns a go-openai client for srv.
func newClient(srv *openaitest.Server) *openai.Client {
	cfg := openai.DefaultConfig(testKey)
	cfg.BaseURL = srv.URL()
	return openai.NewClientWithConfig(cfg)
}

// retryAfterTransport records the Retry-After header of every response, the
// way an adapter can recover the header that go-openai's errors drop.
type retryAfterTransport struct {
	base http.RoundTripper
	mu   sync.Mutex
	last string
}

// RoundTrip implements http.RoundTripper.
func (t *retryAfterTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	t.mu.Lock()
	t.last = resp.Header.Get("Retry-After")
	t.mu.Unlock()
	return resp, nil
}

// lastRetryAfter returns the Retry-After header of the latest response.
func (t *retryAfterTransport) lastRetryAfter() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.last
}

// streamResult is what a test assembles from a go-openai stream.
type streamResult struct {
	Text         string
	ToolCalls    []openaitest.ToolCall
	Deltas       int
	FinishReason openai.FinishReason
	Usage        *openai.Usage
	// Headers counts, per tool call index, the chunks that carried an id.
	Headers map[int]int
}

// collect reads stream to its end and assembles the deltas. It returns the
// error that ended the stream, nil for a clean io.EOF.
func collect(stream *openai.ChatCompletionStream) (streamResult, error) {
	res := streamResult{Headers: map[int]int{}}
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			return res, err
		}
		if chunk.Usage != nil {
			res.Usage = chunk.Usage
		}
		for _, choice := range chunk.Choices {
			if choice.Delta.Content != "" {
				res.Text += choice.Delta.Content
				res.Deltas++
			}
			for _, tc := range choice.Delta.ToolCalls {
				i := *tc.Index
				for len(res.ToolCalls) <= i {
					res.ToolCalls = append(res.ToolCalls, openaitest.ToolCall{})
				}
				if tc.ID != "" {
					res.Headers[i]++
					res.ToolCalls[i].ID = tc.ID
				}
				res.ToolCalls[i].Name += tc.Function.Name
				res.ToolCalls[i].Arguments += tc.Function.Arguments
			}
			if choice.FinishReason != "" {
				res.FinishReason = choice.FinishReason
			}
		}
	}
}

// streamAll streams req from srv and assembles the whole answer, failing
// the test on any error.
func streamAll(t *testing.T, srv *openaitest.Server, req openai.ChatCompletionRequest) streamResult {
	t.Helper()
	stream, err := newClient(srv).CreateChatCompletionStream(testContext(t), req)
	if err != nil {
		t.Fatalf("CreateChatCompletionStream: %v", err)
	}
	defer stream.Close()
	res, err := collect(stream)
	if err != nil {
		t.Fatalf("collect: %v", err)
	}
	return res
}

// chatRequest returns a minimal request with one user message.
func chatRequest(text string) openai.ChatCompletionRequest {
	return openai.ChatCompletionRequest{
		Model:    testModel,
		Messages: []openai.ChatCompletionMessage{{Role: openai.ChatMessageRoleUser, Content: text}},
	}
}

// testContext returns a context that ends with the test or after ten
// seconds, whichever comes first.
func testContext(t *testing.T) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// fakeTB records Errorf calls instead of failing the test, so tests can
// check that the server fails a test loudly.
type fakeTB struct {
	testing.TB
	mu     sync.Mutex
	errors []string
}

// Errorf records the message.
func (f *fakeTB) Errorf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.errors = append(f.errors, format)
}

// errorCount returns how many errors were recorded.
func (f *fakeTB) errorCount() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.errors)
}

package openaitest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/openaitest"
)

// TestWireFormat checks the exact events on the wire, which go-openai's
// lenient decoding would not notice.
func TestWireFormat(t *testing.T) {
	srv := openaitest.New(t,
		openaitest.WithChunkSize(6),
		openaitest.WithScript(openaitest.ToolCalls(openaitest.ToolCall{ID: "call_1", Name: "bash", Arguments: `{"command":"ls"}`}).WithUsage(5, 1)),
	)
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true,"stream_options":{"include_usage":true}}`
	resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatalf("POST: %v", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("reading body: %v", err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Errorf("Content-Type = %q, want text/event-stream", ct)
	}
	const prefix = `{"id":"chatcmpl-fake-1","object":"chat.completion.chunk","created":`
	var got []string
	for _, event := range strings.Split(strings.TrimSuffix(string(raw), "\n\n"), "\n\n") {
		data, ok := strings.CutPrefix(event, "data: ")
		if !ok {
			t.Fatalf("event %q does not start with data:", event)
		}
		if rest, ok := strings.CutPrefix(data, prefix); ok {
			data = rest[strings.Index(rest, `"model"`):]
		}
		got = append(got, data)
	}
	want := []string{
		`"model":"m","choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`,
		`"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"bash","arguments":""}}]},"finish_reason":null}]}`,
		`"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"comm"}}]},"finish_reason":null}]}`,
		`"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"and\":\""}}]},"finish_reason":null}]}`,
		`"model":"m","choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"ls\"}"}}]},"finish_reason":null}]}`,
		`"model":"m","choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}`,
		`"model":"m","choices":[],"usage":{"prompt_tokens":5,"completion_tokens":1,"total_tokens":6}}`,
		`[DONE]`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

package openaitest

import (
	"encoding/json"
	"fmt"
	"net/http"
)

// chunk is the JSON shape of one streamed chat.completion.chunk.
type chunk struct {
	ID      string        `json:"id"`
	Object  string        `json:"object"`
	Created int64         `json:"created"`
	Model   string        `json:"model"`
	Choices []chunkChoice `json:"choices"`
	Usage   *wireUsage    `json:"usage,omitempty"`
}

type chunkChoice struct {
	Index        int     `json:"index"`
	Delta        delta   `json:"delta"`
	FinishReason *string `json:"finish_reason"`
}

type delta struct {
	Role      string          `json:"role,omitempty"`
	Content   *string         `json:"content,omitempty"`
	ToolCalls []toolCallDelta `json:"tool_calls,omitempty"`
}

// toolCallDelta is one tool call fragment. As OpenAI does, only the first
// fragment of a call carries id, type and name; every fragment carries its
// index and a piece of the arguments.
type toolCallDelta struct {
	Index    int           `json:"index"`
	ID       string        `json:"id,omitempty"`
	Type     string        `json:"type,omitempty"`
	Function functionDelta `json:"function"`
}

type functionDelta struct {
	Name      string `json:"name,omitempty"`
	Arguments string `json:"arguments"`
}

type wireUsage struct {
	PromptTokens        int                `json:"prompt_tokens"`
	CompletionTokens    int                `json:"completion_tokens"`
	TotalTokens         int                `json:"total_tokens"`
	PromptTokensDetails *wirePromptDetails `json:"prompt_tokens_details,omitempty"`
}

// wirePromptDetails is OpenAI's breakdown of the prompt tokens.
type wirePromptDetails struct {
	CachedTokens int `json:"cached_tokens"`
}

// usageOf converts a response's usage to its wire form.
func usageOf(u *Usage) *wireUsage {
	if u == nil {
		return &wireUsage{}
	}
	w := &wireUsage{
		PromptTokens:     u.PromptTokens,
		CompletionTokens: u.CompletionTokens,
		TotalTokens:      u.PromptTokens + u.CompletionTokens,
	}
	if u.CachedTokens > 0 {
		w.PromptTokensDetails = &wirePromptDetails{CachedTokens: u.CachedTokens}
	}
	return w
}

// streamChunks returns the chunks that stream resp: a role chunk, the text
// in pieces of size runes, each tool call's arguments in pieces of size
// runes, and a chunk with the finish reason. The usage chunk is not
// included.
func streamChunks(resp Response, id, model string, created int64, size int) []chunk {
	base := chunk{ID: id, Object: "chat.completion.chunk", Created: created, Model: model}
	with := func(d delta, finish *string) chunk {
		c := base
		c.Choices = []chunkChoice{{Delta: d, FinishReason: finish}}
		return c
	}
	empty := ""
	chunks := []chunk{with(delta{Role: "assistant", Content: &empty}, nil)}
	for _, piece := range split(resp.Text, size) {
		chunks = append(chunks, with(delta{Content: &piece}, nil))
	}
	for i, call := range resp.ToolCalls {
		first := toolCallDelta{Index: i, ID: call.ID, Type: "function", Function: functionDelta{Name: call.Name}}
		chunks = append(chunks, with(delta{ToolCalls: []toolCallDelta{first}}, nil))
		for _, piece := range split(call.Arguments, size) {
			next := toolCallDelta{Index: i, Function: functionDelta{Arguments: piece}}
			chunks = append(chunks, with(delta{ToolCalls: []toolCallDelta{next}}, nil))
		}
	}
	finish := finishReason(resp)
	return append(chunks, with(delta{}, &finish))
}

// usageChunk returns the final chunk that carries usage and no choices, as
// OpenAI sends it when stream_options.include_usage is set.
func usageChunk(resp Response, id, model string, created int64) chunk {
	return chunk{
		ID: id, Object: "chat.completion.chunk", Created: created, Model: model,
		Choices: []chunkChoice{}, Usage: usageOf(resp.Usage),
	}
}

// finishReason returns the response's finish reason.
func finishReason(resp Response) string {
	switch {
	case resp.FinishReason != "":
		return resp.FinishReason
	case len(resp.ToolCalls) > 0:
		return "tool_calls"
	default:
		return "stop"
	}
}

// split cuts s into pieces of at most size runes, never inside a rune.
func split(s string, size int) []string {
	var pieces []string
	runes := []rune(s)
	for len(runes) > 0 {
		n := min(size, len(runes))
		pieces = append(pieces, string(runes[:n]))
		runes = runes[n:]
	}
	return pieces
}

// sseWriter writes server-sent events and flushes each one.
type sseWriter struct {
	w http.ResponseWriter
	f http.Flusher
}

// newSSEWriter sends the event-stream headers and returns a writer.
func newSSEWriter(w http.ResponseWriter) (*sseWriter, error) {
	f, ok := w.(http.Flusher)
	if !ok {
		return nil, fmt.Errorf("response writer %T cannot flush", w)
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	f.Flush()
	return &sseWriter{w: w, f: f}, nil
}

// data sends one "data: <payload>" event.
func (s *sseWriter) data(payload []byte) error {
	if _, err := fmt.Fprintf(s.w, "data: %s\n\n", payload); err != nil {
		return fmt.Errorf("writing event: %w", err)
	}
	s.f.Flush()
	return nil
}

// json sends v as one data event.
func (s *sseWriter) json(v any) error {
	payload, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding event: %w", err)
	}
	return s.data(payload)
}

// done sends the terminating [DONE] event.
func (s *sseWriter) done() error {
	return s.data([]byte("[DONE]"))
}

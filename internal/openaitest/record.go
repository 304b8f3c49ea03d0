package openaitest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
)

// Request is one request the server received, recorded before it was
// answered.
type Request struct {
	// Method and Path are the request's method and URL path.
	Method string
	Path   string
	// Header holds the request headers, Authorization included. Assert on
	// it; never print it.
	Header http.Header
	// Body is the raw request body.
	Body []byte
	// Chat is the parsed body of a chat completion request, nil otherwise
	// or when the body did not parse.
	Chat *ChatRequest
	// Transcription is the parsed form of a transcription request, nil
	// otherwise or when the form did not parse.
	Transcription *TranscriptionRequest
}

// ChatRequest is the parsed body of a chat completion request.
type ChatRequest struct {
	Model    string
	Messages []Message
	Tools    []Tool
	// ToolChoice is the raw tool_choice value, nil when absent.
	ToolChoice json.RawMessage
	Stream     bool
	// IncludeUsage reports stream_options.include_usage.
	IncludeUsage bool
}

// Message is one message of a chat request.
type Message struct {
	Role string
	// Content is the content when it was sent as a plain string.
	Content string
	// Parts is the content when it was sent as an array of parts.
	Parts      []ContentPart
	Name       string
	ToolCalls  []ToolCall
	ToolCallID string
}

// ContentPart is one part of multi-part message content.
type ContentPart struct {
	// Type is "text" or "image_url" (or whatever else the client sent).
	Type string
	// Text is the text of a "text" part.
	Text string
	// ImageURL and ImageDetail describe an "image_url" part; ImageURL is
	// often a data: URL.
	ImageURL    string
	ImageDetail string
}

// Tool is one tool offered to the model.
type Tool struct {
	Type        string
	Name        string
	Description string
	// Parameters is the raw JSON schema of the arguments.
	Parameters json.RawMessage
}

// Text returns the message's text: Content, or the text of every text part
// joined with newlines.
func (m Message) Text() string {
	if m.Parts == nil {
		return m.Content
	}
	var texts []string
	for _, p := range m.Parts {
		if p.Type == "text" {
			texts = append(texts, p.Text)
		}
	}
	return strings.Join(texts, "\n")
}

// LastMessage returns the last message of the request, or the zero
// Message when there is none.
func (r ChatRequest) LastMessage() Message {
	if len(r.Messages) == 0 {
		return Message{}
	}
	return r.Messages[len(r.Messages)-1]
}

// wireChatRequest is the JSON shape of a chat completion request.
type wireChatRequest struct {
	Model         string          `json:"model"`
	Messages      []wireMessage   `json:"messages"`
	Tools         []wireTool      `json:"tools"`
	ToolChoice    json.RawMessage `json:"tool_choice"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
}

type wireMessage struct {
	Role       string          `json:"role"`
	Content    json.RawMessage `json:"content"`
	Name       string          `json:"name"`
	ToolCalls  []wireToolCall  `json:"tool_calls"`
	ToolCallID string          `json:"tool_call_id"`
}

type wireToolCall struct {
	ID       string `json:"id"`
	Type     string `json:"type"`
	Function struct {
		Name      string `json:"name"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

type wirePart struct {
	Type     string `json:"type"`
	Text     string `json:"text"`
	ImageURL *struct {
		URL    string `json:"url"`
		Detail string `json:"detail"`
	} `json:"image_url"`
}

type wireTool struct {
	Type     string `json:"type"`
	Function struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		Parameters  json.RawMessage `json:"parameters"`
	} `json:"function"`
}

// parseChatRequest parses a chat completion request body.
func parseChatRequest(body []byte) (ChatRequest, error) {
	var w wireChatRequest
	if err := json.Unmarshal(body, &w); err != nil {
		return ChatRequest{}, fmt.Errorf("parsing chat request: %w", err)
	}
	req := ChatRequest{
		Model:      w.Model,
		ToolChoice: w.ToolChoice,
		Stream:     w.Stream,
	}
	if w.StreamOptions != nil {
		req.IncludeUsage = w.StreamOptions.IncludeUsage
	}
	for i, wm := range w.Messages {
		m, err := parseMessage(wm)
		if err != nil {
			return ChatRequest{}, fmt.Errorf("parsing message %d: %w", i, err)
		}
		req.Messages = append(req.Messages, m)
	}
	for _, wt := range w.Tools {
		req.Tools = append(req.Tools, Tool{
			Type:        wt.Type,
			Name:        wt.Function.Name,
			Description: wt.Function.Description,
			Parameters:  wt.Function.Parameters,
		})
	}
	return req, nil
}

// parseMessage converts one wire message, whose content is absent, null, a
// string or an array of parts.
func parseMessage(wm wireMessage) (Message, error) {
	m := Message{Role: wm.Role, Name: wm.Name, ToolCallID: wm.ToolCallID}
	for _, tc := range wm.ToolCalls {
		m.ToolCalls = append(m.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
	}
	content := bytes.TrimSpace(wm.Content)
	switch {
	case len(content) == 0 || string(content) == "null":
	case content[0] == '"':
		if err := json.Unmarshal(content, &m.Content); err != nil {
			return Message{}, fmt.Errorf("parsing content: %w", err)
		}
	default:
		var parts []wirePart
		if err := json.Unmarshal(content, &parts); err != nil {
			return Message{}, fmt.Errorf("parsing content parts: %w", err)
		}
		m.Parts = make([]ContentPart, 0, len(parts))
		for _, p := range parts {
			cp := ContentPart{Type: p.Type, Text: p.Text}
			if p.ImageURL != nil {
				cp.ImageURL, cp.ImageDetail = p.ImageURL.URL, p.ImageURL.Detail
			}
			m.Parts = append(m.Parts, cp)
		}
	}
	return m, nil
}

// record appends req to the log and wakes every WaitForRequests.
func (s *Server) record(req Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	if s.recordLimit > 0 && len(s.requests) > 2*s.recordLimit {
		// Trimmed in halves, so that recording stays cheap.
		s.requests = slices.Clone(s.requests[len(s.requests)-s.recordLimit:])
	}
	close(s.changed)
	s.changed = make(chan struct{})
}

// Requests returns a copy of every request received so far, in order of
// arrival.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return cloneRequests(s.requests)
}

// ChatRequests returns the parsed body of every chat completion request
// received so far, in order of arrival.
func (s *Server) ChatRequests() []ChatRequest {
	return parsed(s, func(r Request) *ChatRequest { return r.Chat })
}

// parsed returns, in order of arrival, the parsed form pick finds in each
// recorded request, skipping requests where it finds none.
func parsed[T any](s *Server, pick func(Request) *T) []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []T
	for _, r := range s.requests {
		if v := pick(r); v != nil {
			out = append(out, *v)
		}
	}
	return out
}

// AllBodies returns a copy of the raw body of every request received so
// far, whatever its path, so a test can scan all that the model provider
// was sent for values that must never leave the host.
func (s *Server) AllBodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, 0, len(s.requests))
	for _, r := range s.requests {
		out = append(out, bytes.Clone(r.Body))
	}
	return out
}

// WaitForRequests waits until at least n requests have been received and
// returns them all. It returns an error when timeout passes first.
func (s *Server) WaitForRequests(n int, timeout time.Duration) ([]Request, error) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		s.mu.Lock()
		got, changed := len(s.requests), s.changed
		if got >= n {
			out := cloneRequests(s.requests)
			s.mu.Unlock()
			return out, nil
		}
		s.mu.Unlock()
		select {
		case <-changed:
		case <-timer.C:
			return nil, fmt.Errorf("fake openai: got %d requests, want %d after %v", got, n, timeout)
		}
	}
}

// cloneRequests copies requests so that callers cannot alter the log.
func cloneRequests(requests []Request) []Request {
	out := make([]Request, len(requests))
	for i, r := range requests {
		r.Header = r.Header.Clone()
		r.Body = bytes.Clone(r.Body)
		out[i] = r
	}
	return out
}

package openaitest

import (
	"fmt"
	"net/http"
)

// Failure selects how a scripted response goes wrong on the wire.
type Failure int

const (
	// FailNone sends the response completely and correctly.
	FailNone Failure = iota
	// FailAbort sends the first FailAfter chunks, then drops the connection
	// in the middle of the body, without [DONE]. go-openai's Recv returns
	// io.ErrUnexpectedEOF. A non-streamed response is cut off mid-JSON.
	FailAbort
	// FailEndWithoutDone sends the first FailAfter chunks, then ends the
	// body cleanly but without [DONE], as a misbehaving proxy may.
	// go-openai's Recv returns plain io.EOF here, so a caller that wants to
	// notice must check that it saw a finish_reason.
	FailEndWithoutDone
	// FailInvalidJSON sends the first FailAfter chunks, then a data line
	// that is not valid JSON. A non-streamed response body is invalid JSON.
	FailInvalidJSON
	// FailStall sends the first FailAfter chunks, then blocks until the
	// request's context ends or the server closes, and then drops the
	// connection.
	FailStall
	// FailErrorEvent sends the first FailAfter chunks, then an error event
	// (data: {"error":{...}}) as OpenAI does when it fails mid-stream, and
	// ends the stream. go-openai's Recv returns an error wrapping an
	// *openai.APIError whose HTTPStatusCode is 0. A non-streamed response
	// is a 500 error with the same body.
	FailErrorEvent
	// FailReset resets the connection (a TCP RST) after the first
	// FailAfter chunks; with FailAfter 0 before any answer at all, as a
	// proxy or a load balancer dropping the connection does. The client
	// sees ECONNRESET ("connection reset by peer"), or an unexpected EOF
	// once the body began.
	FailReset
)

// midStreamError returns the error OpenAI reports when it fails
// mid-stream.
func midStreamError() HTTPError {
	return HTTPError{
		Status:  http.StatusInternalServerError,
		Message: "The server had an error while processing your request. Sorry about that!",
		Type:    "server_error",
	}
}

// String returns the name of the failure mode.
func (f Failure) String() string {
	switch f {
	case FailNone:
		return "FailNone"
	case FailAbort:
		return "FailAbort"
	case FailEndWithoutDone:
		return "FailEndWithoutDone"
	case FailInvalidJSON:
		return "FailInvalidJSON"
	case FailStall:
		return "FailStall"
	case FailErrorEvent:
		return "FailErrorEvent"
	case FailReset:
		return "FailReset"
	default:
		return fmt.Sprintf("Failure(%d)", int(f))
	}
}

// Response is one scripted answer to a chat completion request.
type Response struct {
	// Text is the assistant message content.
	Text string
	// ToolCalls are the tool calls the assistant makes, in order.
	ToolCalls []ToolCall
	// Usage, when non-nil, is reported in the non-streamed body and, for a
	// stream, in a final chunk when the request sets
	// stream_options.include_usage. When nil, both counts are zero.
	Usage *Usage
	// FinishReason overrides the finish reason, which is otherwise
	// "tool_calls" when there are tool calls and "stop" when there are not.
	FinishReason string
	// ChunkSize, when at least 1, overrides the server's chunk size for this
	// response.
	ChunkSize int
	// Error, when non-nil, makes the server answer with this HTTP error
	// instead of a completion; all other fields are then ignored.
	Error *HTTPError
	// Failure selects a broken or stalled answer; see the Fail constants.
	Failure Failure
	// FailAfter is how many streamed chunks are sent before the failure.
	FailAfter int
}

// ToolCall is one tool call, in a scripted response or in a recorded
// assistant message.
type ToolCall struct {
	// ID is the call's id; the server generates one when it is empty.
	ID string
	// Name is the function name.
	Name string
	// Arguments is the JSON text of the arguments, sent as it is.
	Arguments string
}

// Usage is the token accounting of one response.
type Usage struct {
	PromptTokens     int
	CompletionTokens int
	// CachedTokens are the prompt tokens served from the provider's cache
	// (part of PromptTokens), sent as prompt_tokens_details.cached_tokens.
	CachedTokens int
}

// HTTPError is an error answer: a status code and OpenAI's JSON error body
// {"error":{"message":...,"type":...,"param":...,"code":...}}.
type HTTPError struct {
	// Status is the HTTP status code.
	Status int
	// Message, Type, Param and Code fill the error body. Code may be a
	// string, a number or nil; an empty Param is sent as null.
	Message string
	Type    string
	Param   string
	Code    any
	// RetryAfter, when not empty, is sent as the Retry-After header.
	RetryAfter string
}

// Responder computes a response from a chat request. It runs on the
// server's handler goroutines, so it must be safe for concurrent use.
type Responder func(req ChatRequest) Response

// Text returns a response whose assistant message is text.
func Text(text string) Response {
	return Response{Text: text}
}

// ToolCalls returns a response that makes the given tool calls.
func ToolCalls(calls ...ToolCall) Response {
	return Response{ToolCalls: calls}
}

// TextAndToolCalls returns a response with both text and tool calls.
func TextAndToolCalls(text string, calls ...ToolCall) Response {
	return Response{Text: text, ToolCalls: calls}
}

// Error returns a response that is the HTTP error e.
func Error(e HTTPError) Response {
	return Response{Error: &e}
}

// StatusError returns an HTTP error response with the given status and
// message, and the error type OpenAI uses for that status.
func StatusError(status int, message string) Response {
	return Error(HTTPError{Status: status, Message: message, Type: errorType(status)})
}

// RateLimited returns a 429 error worded like OpenAI's, with the
// Retry-After header set to retryAfter when it is not empty.
func RateLimited(retryAfter string) Response {
	return Error(HTTPError{
		Status:     http.StatusTooManyRequests,
		Message:    "Rate limit reached for requests. Please try again later.",
		Type:       "requests",
		Code:       "rate_limit_exceeded",
		RetryAfter: retryAfter,
	})
}

// ContextLengthExceeded returns the 400 error OpenAI sends when the
// conversation no longer fits the model's context window, worded as OpenAI
// words it, with code "context_length_exceeded".
func ContextLengthExceeded() Response {
	return Error(HTTPError{
		Status: http.StatusBadRequest,
		Message: "This model's maximum context length is 128000 tokens. " +
			"However, your messages resulted in 131072 tokens. " +
			"Please reduce the length of the messages.",
		Type:  "invalid_request_error",
		Param: "messages",
		Code:  "context_length_exceeded",
	})
}

// WithUsage returns a copy of r that reports the given token counts.
func (r Response) WithUsage(promptTokens, completionTokens int) Response {
	r.Usage = &Usage{PromptTokens: promptTokens, CompletionTokens: completionTokens}
	return r
}

// WithCachedUsage returns a copy of r that reports the given token counts,
// cachedTokens of the prompt tokens served from the cache.
func (r Response) WithCachedUsage(promptTokens, completionTokens, cachedTokens int) Response {
	r.Usage = &Usage{PromptTokens: promptTokens, CompletionTokens: completionTokens, CachedTokens: cachedTokens}
	return r
}

// Fail returns a copy of r that fails as f after sending afterChunks
// streamed chunks.
func (r Response) Fail(f Failure, afterChunks int) Response {
	r.Failure = f
	r.FailAfter = afterChunks
	return r
}

// errorType returns the error type OpenAI reports for an HTTP status.
func errorType(status int) string {
	switch {
	case status == http.StatusTooManyRequests:
		return "rate_limit_exceeded"
	case status >= 500:
		return "server_error"
	default:
		return "invalid_request_error"
	}
}

// Enqueue appends responses to the script. Each chat request takes the
// first response of the script; once it is empty the responder set by
// Handle answers, and without one the server answers with a 500 error.
func (s *Server) Enqueue(responses ...Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, responses...)
}

// Handle sets the function that answers chat requests once the script is
// empty. A nil f removes it.
func (s *Server) Handle(f func(req ChatRequest) Response) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.responder = f
}

// Pending returns how many scripted chat responses have not been used yet.
func (s *Server) Pending() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script)
}

// nextResponse takes the response for req: the head of the script, else
// the responder's answer. It reports false when neither exists.
func (s *Server) nextResponse(req ChatRequest) (Response, bool) {
	s.mu.Lock()
	if len(s.script) > 0 {
		r := s.script[0]
		s.script = s.script[1:]
		s.mu.Unlock()
		return r, true
	}
	responder := s.responder
	s.mu.Unlock()
	if responder == nil {
		return Response{}, false
	}
	return responder(req), true
}

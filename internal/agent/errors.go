package agent

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// ErrContextTooLong reports that the conversation no longer fits the model's
// context window. A [*ProviderError] for such a response matches it with
// [errors.Is], whichever provider produced it.
var ErrContextTooLong = errors.New("agent: the conversation exceeds the model's context window")

// ErrStreamInterrupted reports that the model's answer stream broke after
// some text had arrived and before any tool call began: nothing of it was
// kept, and the same request may be sent again. The session sends it once
// more, after an [EventStreamRestart].
var ErrStreamInterrupted = errors.New("agent: the model's answer was cut off")

// ErrSessionClosed is returned by a closed session's Prompt.
var ErrSessionClosed = errors.New("agent: session is closed")

// ErrInsideTurn is returned by [Session.Prompt] and [Session.CloseContext]
// called from inside the session's own turn, which they would wait for.
var ErrInsideTurn = errors.New("agent: called from inside the session's own turn, which it would wait for")

// ErrAgentClosed is returned by [Agent.Session] once the agent is closed.
var ErrAgentClosed = errors.New("agent: the agent is closed")

// ProviderError is an error response of the model provider: its HTTP status
// and the provider's own message, code and type.
type ProviderError struct {
	// StatusCode is the HTTP status of the response (0 when unknown).
	StatusCode int
	// Message is the provider's error message.
	Message string
	// Code and Type are the provider's error code and type, when it sent
	// them (OpenAI: "context_length_exceeded", "invalid_request_error").
	Code string
	Type string
	// RetryAfter is the delay the provider asked for (Retry-After), zero
	// when it asked for none.
	RetryAfter time.Duration
	// Err is the underlying error, if any.
	Err error
}

// Error returns "model provider: status <code>: <message>".
func (e *ProviderError) Error() string {
	msg := e.Message
	if msg == "" && e.Err != nil {
		msg = e.Err.Error()
	}
	if e.StatusCode == 0 {
		return "model provider: " + msg
	}
	return fmt.Sprintf("model provider: status %d: %s", e.StatusCode, msg)
}

// Unwrap returns the underlying error.
func (e *ProviderError) Unwrap() error { return e.Err }

// Is reports whether target is [ErrContextTooLong] and e says the context
// window was exceeded: a 400 (or an unknown status) with the code
// context_length_exceeded, or a message saying the context or maximum length
// was exceeded.
func (e *ProviderError) Is(target error) bool {
	return target == ErrContextTooLong && e.contextTooLong()
}

// contextTooLong reports whether e is a context-window error.
func (e *ProviderError) contextTooLong() bool {
	if e.StatusCode != 0 && e.StatusCode != 400 && e.StatusCode != 413 {
		return false
	}
	if e.Code == "context_length_exceeded" {
		return true
	}
	msg := strings.ToLower(e.Message)
	has := func(words ...string) bool {
		for _, w := range words {
			if strings.Contains(msg, w) {
				return true
			}
		}
		return false
	}
	switch {
	case has("context_length_exceeded", "prompt is too long"):
		return true
	case has("context") && has("length", "window", "too long", "exceed"):
		return true
	case has("maximum length") && has("exceed"):
		return true
	}
	return false
}

// Retryable reports whether the request may succeed when sent again: a 429
// or a 5xx status.
func (e *ProviderError) Retryable() bool {
	return e.StatusCode == 429 || e.StatusCode >= 500
}

// RedactedCopy returns a copy of e with its message redacted by r and
// without the underlying error, so that [errors.As] finds a
// *ProviderError through an error redacted with [redactor.Redactor.RedactError].
func (e *ProviderError) RedactedCopy(r *redactor.Redactor) error {
	cp := *e
	cp.Message = r.Redact(e.Message)
	cp.Err = nil
	return &cp
}

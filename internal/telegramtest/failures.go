package telegramtest

import (
	"fmt"
	"net/http"
	"strings"
)

// APIError is an error answer of the Bot API: {"ok":false,"error_code":Code,
// "description":Description,"parameters":{"retry_after":RetryAfter}}.
type APIError struct {
	Code        int
	Description string
	// RetryAfter is sent as parameters.retry_after when it is positive.
	RetryAfter int
}

// Error returns the description with the code, as a client would show it.
func (e *APIError) Error() string {
	return fmt.Sprintf("telegram error %d: %s", e.Code, e.Description)
}

// FailNext makes the next n requests for method fail with the given error
// code, description and retry_after (ignored when not positive). An empty
// description is filled in from the code as Telegram words it, for example
// "Too Many Requests: retry after 3" for 429. Failures queue up: a second
// call adds to what the first left. With FileDownload as method, the next n
// file downloads fail: they are answered with the code and the description
// as plain text, as the file server does.
func (s *Server) FailNext(method string, n int, code int, description string, retryAfter int) {
	if description == "" {
		description = defaultDescription(code, retryAfter)
	}
	key := strings.ToLower(method)
	s.mu.Lock()
	defer s.mu.Unlock()
	for range n {
		s.failures[key] = append(s.failures[key], APIError{Code: code, Description: description, RetryAfter: retryAfter})
	}
}

// PendingFailures returns how many failures queued by FailNext for method
// are still to be answered. A test that injects failures at its own pace
// checks it first, so that a client slowed by its back-off does not face
// a queue that grows faster than it can drain it.
func (s *Server) PendingFailures(method string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.failures[strings.ToLower(method)])
}

// DisableMethod makes the server answer method with 404 "Not Found", as
// Telegram answers a method it does not know (sendMessageDraft on an older
// Bot API server, for example).
func (s *Server) DisableMethod(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.disabled[strings.ToLower(method)] = true
}

// EnableMethod undoes DisableMethod.
func (s *Server) EnableMethod(method string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.disabled, strings.ToLower(method))
}

// RejectHTML makes every text or caption sent with parse_mode HTML that
// contains substr fail with 400 "Bad Request: can't parse entities: ...",
// however valid its HTML is, so that a test can drive a plain-text fallback.
func (s *Server) RejectHTML(substr string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.rejectHTML = append(s.rejectHTML, substr)
}

// takeFailure returns the error that method must fail with now, if any:
// a disabled method, then the next injected failure.
func (s *Server) takeFailure(method string) *APIError {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.takeFailureLocked(method)
}

// takeFailureLocked is takeFailure with s.mu held.
func (s *Server) takeFailureLocked(method string) *APIError {
	key := strings.ToLower(method)
	if s.disabled[key] {
		return notFound()
	}
	queue := s.failures[key]
	if len(queue) == 0 {
		return nil
	}
	apiErr := queue[0]
	s.failures[key] = queue[1:]
	return &apiErr
}

func defaultDescription(code, retryAfter int) string {
	switch code {
	case http.StatusTooManyRequests:
		return fmt.Sprintf("Too Many Requests: retry after %d", retryAfter)
	case http.StatusConflict:
		return "Conflict: terminated by other getUpdates request; make sure that only one bot instance is running"
	case http.StatusForbidden:
		return "Forbidden: bot was blocked by the user"
	case http.StatusBadRequest:
		return "Bad Request"
	case http.StatusUnauthorized:
		return "Unauthorized"
	case http.StatusNotFound:
		return "Not Found"
	default:
		return http.StatusText(code)
	}
}

func errorResponse(e *APIError) map[string]any {
	resp := map[string]any{"ok": false, "error_code": e.Code, "description": e.Description}
	if e.RetryAfter > 0 {
		resp["parameters"] = map[string]int{"retry_after": e.RetryAfter}
	}
	return resp
}

func badRequest(detail string) *APIError {
	return &APIError{Code: http.StatusBadRequest, Description: "Bad Request: " + detail}
}

func notFound() *APIError {
	return &APIError{Code: http.StatusNotFound, Description: "Not Found"}
}

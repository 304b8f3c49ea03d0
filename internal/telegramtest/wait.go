package telegramtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
)

// errClosed is returned by waits that the server's Close ends.
var errClosed = errors.New("telegramtest server closed")

// Requests returns a copy of every request received so far, in order of
// arrival.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Request, len(s.requests))
	for i, r := range s.requests {
		out[i] = r.clone()
	}
	return out
}

// RequestsFor returns the requests received for method (case-insensitive),
// in order of arrival.
func (s *Server) RequestsFor(method string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if strings.EqualFold(r.Method, method) {
			out = append(out, r)
		}
	}
	return out
}

// AllBodies returns the raw body of every request received, in order, so
// that a security test can scan all that Telegram was sent.
func (s *Server) AllBodies() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, len(s.requests))
	for i, r := range s.requests {
		out[i] = bytes.Clone(r.Body)
	}
	return out
}

// RequestsContaining returns the requests that carry s anywhere the client
// put data: the raw body, a decoded parameter (so JSON escaping cannot hide
// it), an uploaded file's name or content, or the URL query. The URL path is
// not searched, since it carries the bot token by design.
func (s *Server) RequestsContaining(str string) []Request {
	var out []Request
	for _, r := range s.Requests() {
		if r.contains(str) {
			out = append(out, r)
		}
	}
	return out
}

// IsMethod returns a predicate for WaitFor that matches requests for method
// (case-insensitive).
func IsMethod(method string) func(Request) bool {
	return func(r Request) bool { return strings.EqualFold(r.Method, method) }
}

// WaitFor blocks until a request matching match has been received (it may
// already have been) and returns the first one. It fails when ctx ends or the
// server closes first. A request is recorded once the server has applied it
// to its state (so Messages already shows a sent message), just before the
// client reads the answer; a test that ends right away cancels a client
// still reading, so handlers should tolerate context.Canceled.
func (s *Server) WaitFor(ctx context.Context, match func(Request) bool) (Request, error) {
	got, err := s.WaitForCount(ctx, 1, match)
	if err != nil {
		return Request{}, err
	}
	return got[0], nil
}

// WaitForCount blocks until n requests matching match have been received and
// returns the first n of them, in order of arrival. It fails when ctx ends or
// the server closes first.
func (s *Server) WaitForCount(ctx context.Context, n int, match func(Request) bool) ([]Request, error) {
	var found []Request
	scanned := 0
	for {
		s.mu.Lock()
		for ; scanned < len(s.requests) && len(found) < n; scanned++ {
			if r := s.requests[scanned].clone(); match(r) {
				found = append(found, r)
			}
		}
		changed, closed := s.changed, s.closed
		s.mu.Unlock()
		if len(found) >= n {
			return found, nil
		}
		if closed {
			return found, fmt.Errorf("wait for %d requests, got %d: %w", n, len(found), errClosed)
		}
		select {
		case <-ctx.Done():
			return found, fmt.Errorf("wait for %d requests, got %d: %w", n, len(found), ctx.Err())
		case <-changed:
		}
	}
}

// MustWaitFor is WaitFor bounded by the server's wait timeout (see
// WithWaitTimeout); it fails the test when no matching request arrives in
// time. Like testing.TB.Fatal, it must be called from the test's goroutine.
func (s *Server) MustWaitFor(match func(Request) bool) Request {
	s.tb.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.waitTimeout)
	defer cancel()
	r, err := s.WaitFor(ctx, match)
	if err != nil {
		s.tb.Fatalf("telegramtest: %v", err)
	}
	return r
}

// WaitUntil blocks until cond reports true, evaluating it now and again
// after every change of the server's state (a request received, an update
// queued or taken), so that a test waits for an event instead of sleeping.
// cond runs without the server's lock, so it may call Messages and the
// like. WaitUntil fails when ctx ends or the server closes first.
func (s *Server) WaitUntil(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		changed, closed := s.changed, s.closed
		s.mu.Unlock()
		if cond() {
			return nil
		}
		if closed {
			return fmt.Errorf("wait until: %w", errClosed)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait until: %w", ctx.Err())
		case <-changed:
		}
	}
}

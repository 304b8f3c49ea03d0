package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/volcanic/telegram-agent/internal/backoff"
)

// remoteSession is one client session with a Streamable HTTP server.
type remoteSession struct {
	cs *mcp.ClientSession
	// url is the server's endpoint, which errors never quote.
	url string
	// done is closed once the session has ended (the connection failed or
	// was closed); endErr then says how.
	done   chan struct{}
	endErr error

	stopOnce sync.Once
}

var _ link = (*remoteSession)(nil)

// connectRemote opens a client session with sc's endpoint through base,
// sending sc's headers to that endpoint's origin only. ctx bounds the
// connection and the initialize handshake; the session lives until stop.
func connectRemote(ctx context.Context, sc ServerConfig, base http.RoundTripper) (*remoteSession, error) {
	hint := &retryHint{}
	hc, err := remoteClient(sc, base, hint)
	if err != nil {
		return nil, err
	}
	client := mcp.NewClient(&mcp.Implementation{Name: clientName, Version: clientVersion},
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	// The agent only calls tools, so the standalone stream for messages the
	// server starts is not opened: one hanging request less per chat.
	transport := &mcp.StreamableClientTransport{Endpoint: sc.URL, HTTPClient: hc, DisableStandaloneSSE: true}
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = fmt.Errorf("%w (%w)", ctxErr, err)
		}
		return nil, hint.wrap(fmt.Errorf("connecting: %w", hideURL(err, sc.URL)))
	}
	r := &remoteSession{cs: cs, url: sc.URL, done: make(chan struct{})}
	go func() {
		r.endErr = cs.Wait()
		close(r.done)
	}()
	return r, nil
}

// remoteClient returns the HTTP client of one server: requests go through
// base, the server's headers are added to those for its origin only, and a
// redirect to another origin is refused (it would carry the call's
// arguments elsewhere). hint notes the server's Retry-After.
func remoteClient(sc ServerConfig, base http.RoundTripper, hint *retryHint) (*http.Client, error) {
	u, err := url.Parse(sc.URL)
	if err != nil {
		return nil, errors.New("the url is not valid")
	}
	headers := make(http.Header, len(sc.Headers))
	for k, v := range sc.Headers {
		headers.Set(k, v)
	}
	return &http.Client{
		Transport: &headerTransport{base: base, scheme: u.Scheme, host: u.Host, headers: headers, hint: hint},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if !sameOrigin(req.URL, u) {
				return errors.New("the server redirected to another origin; refused")
			}
			if len(via) >= 10 {
				return errors.New("stopped after 10 redirects")
			}
			return nil
		},
	}, nil
}

// headerTransport adds a server's configured headers to every request for
// the server's origin.
type headerTransport struct {
	base         http.RoundTripper
	scheme, host string
	headers      http.Header
	// hint, when set, notes the Retry-After of the answers.
	hint *retryHint
}

// RoundTrip sends req through the base transport, with the headers when req
// is for the server's origin.
func (t *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	r := req
	if len(t.headers) > 0 && req.URL.Scheme == t.scheme && req.URL.Host == t.host {
		// A RoundTripper must not change the request it is given.
		r = req.Clone(req.Context())
		for k, v := range t.headers {
			r.Header[k] = v
		}
	}
	resp, err := t.base.RoundTrip(r)
	if err == nil && t.hint != nil {
		t.hint.note(resp)
	}
	return resp, err
}

// sameOrigin reports whether a and b have the same scheme and host (port
// included).
func sameOrigin(a, b *url.URL) bool { return a.Scheme == b.Scheme && a.Host == b.Host }

// client returns the session.
func (r *remoteSession) client() *mcp.ClientSession { return r.cs }

// alive reports whether the session is still open.
func (r *remoteSession) alive() bool {
	return !isDone(r.done)
}

// broken reports, after a call failed with err, whether the session is
// unusable: it ended, or the server did not answer with a JSON-RPC error
// (the request did not reach it, or the HTTP answer was not MCP). A
// JSON-RPC error (an unknown tool, invalid arguments) leaves it usable.
func (r *remoteSession) broken(err error) error {
	if !r.alive() {
		return r.exitError()
	}
	if serverAnswered(err) {
		return nil
	}
	return fmt.Errorf("the connection to the server failed: %w", err)
}

// transportCodes are the JSON-RPC codes the SDK itself uses for a request
// that never got an answer: rejected by the transport (the request did not
// reach the server, or the HTTP answer was an error), the client or the
// server closing.
var transportCodes = []int64{-32005, -32004, -32003}

// serverAnswered reports whether err, anywhere in its tree, holds a JSON-RPC
// error the server sent (an unknown tool, invalid arguments).
func serverAnswered(err error) bool {
	switch e := err.(type) {
	case nil:
		return false
	case *jsonrpc.Error:
		if !slices.Contains(transportCodes, e.Code) {
			return true
		}
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return serverAnswered(u.Unwrap())
	case interface{ Unwrap() []error }:
		return slices.ContainsFunc(u.Unwrap(), serverAnswered)
	}
	return false
}

// exitError describes how a session that is no longer alive ended.
func (r *remoteSession) exitError() error {
	<-r.done
	if r.endErr != nil {
		return fmt.Errorf("the connection to the server ended: %w", hideURL(r.endErr, r.url))
	}
	return errors.New("the connection to the server ended")
}

// stop closes the session (the SDK bounds the DELETE that ends it on the
// server). It is idempotent and safe for concurrent use.
func (r *remoteSession) stop() {
	r.stopOnce.Do(func() {
		_ = r.cs.Close()
		<-r.done
	})
}

// kill stops the session; a remote server has no process to kill.
func (r *remoteSession) kill() { r.stop() }

// reconnectDelay returns how long to wait before the next connection
// attempt after failures attempts failed in a row, when the server asked
// for no wait: first, doubling, at most most.
func reconnectDelay(failures int, first, most time.Duration) time.Duration {
	return backoff.Policy{Base: first, Max: most}.Delay(failures - 1)
}

// retryHint keeps the Retry-After of a Streamable HTTP server's last 429
// or 503 answer, which the connection's back-off waits whole.
type retryHint struct {
	mu    sync.Mutex
	after time.Duration
}

// note records resp's Retry-After (seconds, or an HTTP date) when resp is
// a 429 or 503.
func (h *retryHint) note(resp *http.Response) {
	if resp.StatusCode != http.StatusTooManyRequests && resp.StatusCode != http.StatusServiceUnavailable {
		return
	}
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	var d time.Duration
	if s, err := strconv.Atoi(v); err == nil && s > 0 {
		d = time.Duration(s) * time.Second
	} else if at, err := http.ParseTime(v); err == nil {
		d = time.Until(at)
	}
	if d > 0 {
		h.mu.Lock()
		h.after = d
		h.mu.Unlock()
	}
}

// wrap returns err with the Retry-After noted since the last wrap, if any.
func (h *retryHint) wrap(err error) error {
	h.mu.Lock()
	d := h.after
	h.after = 0
	h.mu.Unlock()
	if d <= 0 || err == nil {
		return err
	}
	return &retryAfterError{err: err, after: d}
}

// urlHidden is an error of the Streamable HTTP transport with the server's
// url taken out of its text: the HTTP client quotes the url of a request
// that failed, and a url may carry a credential in its path (a hosted
// server's per-user endpoint) that no redactor knows. The error it wraps
// stays in the chain for errors.Is and errors.As.
type urlHidden struct {
	err  error
	text string
}

func (e *urlHidden) Error() string { return e.text }
func (e *urlHidden) Unwrap() error { return e.err }

// hideURL returns err with every spelling of the url raw (as configured,
// as parsed and printed, with its password masked) replaced by a mention
// of the server's url; nil stays nil.
func hideURL(err error, raw string) error {
	if err == nil || raw == "" {
		return err
	}
	spellings := []string{raw}
	if u, perr := url.Parse(raw); perr == nil {
		spellings = append(spellings, u.String(), u.Redacted())
	}
	// The longest first, so that a spelling inside another leaves nothing
	// of it behind.
	slices.SortFunc(spellings, func(a, b string) int { return len(b) - len(a) })
	text := err.Error()
	for _, s := range spellings {
		text = strings.ReplaceAll(text, s, "<the server's url>")
	}
	return &urlHidden{err: err, text: text}
}

package botapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/volcanic/telegram-agent/internal/backoff"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// DefaultBaseURL is the Bot API server a Client talks to unless
// WithBaseURL names another.
const DefaultBaseURL = "https://api.telegram.org"

// callTimeout bounds one try of a method call; getUpdates adds its
// long-poll timeout, and transferTimeout bounds a file's upload or download.
const (
	callTimeout     = time.Minute
	transferTimeout = 5 * time.Minute
)

// maxAnswer bounds the body of a Bot API answer the client reads.
const maxAnswer = 64 << 20

// Client calls the Bot API for one bot. Its methods are safe for
// concurrent use. WithAttempts returns a view of the same client with
// fewer tries per call.
type Client struct {
	s      *shared
	policy RetryPolicy
}

// shared is what the views of one client have in common.
type shared struct {
	token  string
	base   string
	http   *http.Client
	red    *redactor.Redactor
	logger *slog.Logger
	// wait sleeps between tries and reports whether the whole delay passed
	// (sleep, unless a test replaces it).
	wait func(ctx context.Context, d time.Duration) bool
}

// Option configures a Client built by New.
type Option func(*config)

type config struct {
	base   string
	http   *http.Client
	logger *slog.Logger
	policy RetryPolicy
}

// WithBaseURL sets the Bot API server's base URL (TELEGRAM_API_URL);
// default DefaultBaseURL.
func WithBaseURL(u string) Option { return func(c *config) { c.base = u } }

// WithHTTPClient sets the HTTP client of every call (default: a new
// http.Client; each call is bounded by its own timeout).
func WithHTTPClient(h *http.Client) Option { return func(c *config) { c.http = h } }

// WithLogger sets the logger of retries and rebuilt messages (default:
// discard). It never receives a secret value from the client.
func WithLogger(l *slog.Logger) Option { return func(c *config) { c.logger = l } }

// WithRetryPolicy sets how failed calls are retried (default
// DefaultRetryPolicy).
func WithRetryPolicy(p RetryPolicy) Option { return func(c *config) { c.policy = p } }

// New returns a client for the bot with token; red redacts everything the
// client sends and is required.
func New(token string, red *redactor.Redactor, opts ...Option) (*Client, error) {
	var errs []error
	if token == "" {
		errs = append(errs, errors.New("botapi: the bot token is empty"))
	}
	if red == nil {
		errs = append(errs, errors.New("botapi: no redactor: everything sent to Telegram must pass one"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	cfg := config{base: DefaultBaseURL, policy: DefaultRetryPolicy()}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.http == nil {
		cfg.http = &http.Client{}
	}
	if cfg.logger == nil {
		cfg.logger = slog.New(slog.DiscardHandler)
	}
	if cfg.base == "" {
		cfg.base = DefaultBaseURL
	}
	s := &shared{token: token, base: strings.TrimRight(cfg.base, "/"), http: cfg.http, red: red, logger: cfg.logger, wait: backoff.Sleep}
	return &Client{s: s, policy: cfg.policy}, nil
}

// WithAttempts returns a view of c whose calls make at most n tries (at
// least one), with the same back-off: 2 for transient notices, so that an
// outage does not keep them going for minutes; 1 for streamed previews,
// which the next one replaces.
func (c *Client) WithAttempts(n int) *Client {
	p := c.policy
	p.Attempts = min(max(p.Attempts, 1), max(n, 1))
	return &Client{s: c.s, policy: p}
}

// call runs method with params (JSON-encoded; nil for none) under the
// client's retry policy and decodes the result into out (nil: ignored).
func (c *Client) call(ctx context.Context, method string, params, out any) error {
	body, err := encode(params)
	if err != nil {
		return c.s.encodeError(method, err)
	}
	return c.retry(ctx, method, func(ctx context.Context) error {
		return c.post(ctx, method, body, "application/json", callTimeout, out)
	})
}

// callOnce runs method with one try, whatever the policy.
func (c *Client) callOnce(ctx context.Context, method string, params, out any) error {
	body, err := encode(params)
	if err != nil {
		return c.s.encodeError(method, err)
	}
	return c.post(ctx, method, body, "application/json", callTimeout, out)
}

func encode(params any) ([]byte, error) {
	if params == nil {
		return []byte("{}"), nil
	}
	return json.Marshal(params)
}

// answer is the envelope of every Bot API answer.
type answer struct {
	OK          bool            `json:"ok"`
	Result      json.RawMessage `json:"result"`
	ErrorCode   int             `json:"error_code"`
	Description string          `json:"description"`
	Parameters  struct {
		RetryAfter int `json:"retry_after"`
	} `json:"parameters"`
}

// post makes one try of method with body, bounded by timeout.
func (c *Client) post(ctx context.Context, method string, body []byte, contentType string, timeout time.Duration, out any) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.s.base+"/bot"+c.s.token+"/"+method, bytes.NewReader(body))
	if err != nil {
		return c.s.transportError(method, err)
	}
	req.Header.Set("Content-Type", contentType)
	resp, err := c.s.http.Do(req)
	if err != nil {
		return c.s.transportError(method, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return c.s.transportError(method, err)
	}
	var a answer
	if err := json.Unmarshal(data, &a); err != nil {
		return &Error{Method: method, Code: resp.StatusCode, Description: fmt.Sprintf("the answer is not JSON (HTTP %d)", resp.StatusCode)}
	}
	if !a.OK {
		code := a.ErrorCode
		if code == 0 {
			code = resp.StatusCode
		}
		return &Error{Method: method, Code: code, Description: c.s.scrub(a.Description), RetryAfter: time.Duration(a.Parameters.RetryAfter) * time.Second}
	}
	if out != nil {
		if err := json.Unmarshal(a.Result, out); err != nil {
			return &Error{Method: method, Code: resp.StatusCode, Description: "the result does not decode: " + c.s.scrub(err.Error())}
		}
	}
	return nil
}

// transportError is the *Error of a call that got no answer: the cause's
// text without the token (the request URL holds it) and redacted; only a
// context's end stays in the chain.
func (s *shared) transportError(method string, err error) error {
	text := err.Error()
	var ue *url.Error
	if errors.As(err, &ue) {
		// "Post \"<URL>\": dial tcp ...": the URL says nothing the
		// method and Host do not, and its path is the token's place.
		text = ue.Err.Error()
	}
	e := &Error{Method: method, Description: s.scrub(text), Network: networkKind(err), Host: hostOf(s.base)}
	switch {
	case errors.Is(err, context.Canceled):
		e.cause = context.Canceled
	case errors.Is(err, context.DeadlineExceeded):
		e.cause = context.DeadlineExceeded
	}
	return e
}

// encodeError is the *Error of a request that could not be encoded.
func (s *shared) encodeError(method string, err error) error {
	return &Error{Method: method, Description: "the request does not encode: " + s.scrub(err.Error())}
}

// scrub removes the token and every known secret from text that may quote
// a URL or a request.
func (s *shared) scrub(text string) string {
	return s.red.Redact(strings.ReplaceAll(text, s.token, "<token>"))
}

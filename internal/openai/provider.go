package openai

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	goopenai "github.com/sashabaranov/go-openai"
	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/backoff"
)

// The adapter's defaults.
const (
	DefaultBaseURL        = "https://api.openai.com/v1"
	defaultMaxRetries     = 3
	defaultRetryBaseDelay = time.Second
	defaultMaxRetryDelay  = time.Minute
	defaultIdleTimeout    = 2 * time.Minute
	maxErrorBodyRunes     = 500
)

// emptyParameters is the schema sent for a tool that declares none. It is
// a constant, and each tool gets its own copy, so nothing go-openai does
// with one tool's schema can change another's.
const emptyParameters = `{"type":"object","properties":{}}`

// Config configures [NewProvider]. Zero fields take the defaults.
type Config struct {
	// APIKey is sent as the bearer token (OPENAI_API_KEY).
	APIKey string
	// BaseURL is the API's base URL (OPENAI_BASE_URL), default
	// https://api.openai.com/v1. Any OpenAI-compatible server works:
	// OpenRouter, Ollama, vLLM, LM Studio.
	BaseURL string
	// HTTPClient is the client to use (it is copied, never modified).
	HTTPClient *http.Client
	// MaxRetries is how many times a request that failed before its
	// answer began is retried (default 3; negative means never).
	MaxRetries int
	// RetryBaseDelay is the first backoff delay, doubled on every retry
	// (default 1s). A Retry-After header replaces it.
	RetryBaseDelay time.Duration
	// MaxRetryDelay caps the doubling backoff (default 1m), and is the
	// longest Retry-After the provider waits: a Retry-After is never
	// shortened (the rule of package backoff), so a provider that asks
	// for longer fails the request at once, with the fallback models
	// still to try.
	MaxRetryDelay time.Duration
	// IdleTimeout ends a request that receives nothing (no headers, no
	// chunk) for this long (default 2m), so a turn never hangs.
	IdleTimeout time.Duration
	// FallbackModels are tried in order, each with its own retries, when
	// the request's model stays unavailable (OPENAI_FALLBACK_MODELS).
	FallbackModels []string
	// Logger logs retries (statuses and delays, never messages).
	Logger *slog.Logger
}

// Provider is an [agent.Provider] over go-openai's streaming chat
// completions.
type Provider struct {
	client *goopenai.Client
	cfg    Config
	// sleep waits d before a retry, or until ctx ends, and reports
	// whether d passed (a seam for tests).
	sleep backoff.Sleeper
}

// NewProvider returns a provider for the OpenAI-compatible API cfg describes.
func NewProvider(cfg Config) *Provider {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = defaultMaxRetries
	}
	cfg.MaxRetries = max(cfg.MaxRetries, 0)
	if cfg.RetryBaseDelay <= 0 {
		cfg.RetryBaseDelay = defaultRetryBaseDelay
	}
	if cfg.MaxRetryDelay <= 0 {
		cfg.MaxRetryDelay = defaultMaxRetryDelay
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = defaultIdleTimeout
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	client := &http.Client{}
	if cfg.HTTPClient != nil {
		cp := *cfg.HTTPClient
		client = &cp
	}
	base := client.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	client.Transport = &headerCapture{base: base}
	oc := goopenai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	oc.HTTPClient = client
	return &Provider{client: goopenai.NewClientWithConfig(oc), cfg: cfg, sleep: backoff.Sleep}
}

// Complete streams one chat completion. A request that fails before any
// of the answer arrived (a reset or refused connection, an EOF, a 429 or
// 5xx answer, a stream that broke or went idle) is retried with backoff,
// honouring Retry-After, up to MaxRetries times. When the model stays
// unavailable after its retries, the FallbackModels are tried in order and
// the Response names the one that answered. A stream cut after text arrived
// and before any tool call began returns an error matching
// [agent.ErrStreamInterrupted], so that the caller can send the request
// again; a stream cut inside a tool call is not retried. Errors are a
// *agent.ProviderError for an error answer or a broken answer, the
// context's error when ctx ends, and a transport error otherwise; none of
// them holds the request's URL.
func (p *Provider) Complete(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
	creq := buildChatRequest(req)
	models := []string{req.Model}
	for _, m := range p.cfg.FallbackModels {
		if !slices.Contains(models, m) {
			models = append(models, m)
		}
	}
	var err error
	for i, model := range models {
		if i > 0 {
			p.cfg.Logger.Warn("openai: the model stays unavailable; trying a fallback model",
				"model", models[i-1], "problem", problemKind(err), "fallback", model)
		}
		creq.Model = model
		var resp agent.Response
		if resp, err = p.complete(ctx, creq, onText); err == nil {
			if i > 0 {
				resp.Model = model
			}
			return resp, nil
		}
		if ctx.Err() != nil || !unavailable(err) {
			break
		}
	}
	return agent.Response{}, err
}

// complete is Complete for one model, with its retries.
func (p *Provider) complete(ctx context.Context, creq goopenai.ChatCompletionRequest, onText func(string)) (agent.Response, error) {
	for attempt := 0; ; attempt++ {
		resp, prog, err := p.attempt(ctx, creq, onText)
		if err == nil {
			return resp, nil
		}
		if ctx.Err() != nil {
			return agent.Response{}, err
		}
		if prog.text && !prog.tools && transient(err) {
			return agent.Response{}, fmt.Errorf("%w: %w", agent.ErrStreamInterrupted, err)
		}
		if prog.text || prog.tools || attempt >= p.cfg.MaxRetries || !transient(err) {
			return agent.Response{}, err
		}
		var retryAfter time.Duration
		var pe *agent.ProviderError
		if errors.As(err, &pe) {
			retryAfter = pe.RetryAfter
		}
		delay, ok := p.backoff().Wait(ctx, attempt, retryAfter)
		if !ok {
			return agent.Response{}, fmt.Errorf("%w (the provider asks to wait %s before a retry, longer than the request may wait)", err, delay)
		}
		p.cfg.Logger.Warn("openai: the model request failed before the answer began; retrying",
			"model", creq.Model, "problem", problemKind(err), "retry", attempt+1, "delay", delay)
		if !p.sleep(ctx, delay) {
			return agent.Response{}, fmt.Errorf("model request cancelled: %w", ctx.Err())
		}
	}
}

// transient reports whether a failed request may succeed when sent again:
// a 429 or 5xx answer, an error event mid-stream, a broken or idle
// stream, or a transport failure (no HTTP answer at all).
func transient(err error) bool {
	var pe *agent.ProviderError
	if errors.As(err, &pe) {
		return pe.Retryable() || pe.StatusCode == 0
	}
	var te *transportError
	return errors.As(err, &te)
}

// unavailable reports whether err, after the retries, says the model
// cannot answer now, so that a fallback model may: a transient failure
// that is not a stream cut mid-answer, or a 404 for the model.
func unavailable(err error) bool {
	if errors.Is(err, agent.ErrStreamInterrupted) {
		return false
	}
	var pe *agent.ProviderError
	if errors.As(err, &pe) && pe.StatusCode == http.StatusNotFound {
		return true
	}
	return transient(err)
}

// problemKind names err's kind for the log, never its text (which can
// hold the provider's URL).
func problemKind(err error) string {
	var pe *agent.ProviderError
	if errors.As(err, &pe) {
		if pe.StatusCode != 0 {
			return "status " + strconv.Itoa(pe.StatusCode)
		}
		if errors.Is(err, context.DeadlineExceeded) {
			return "idle timeout"
		}
		return "broken answer"
	}
	return "connection"
}

// backoff is the policy of the retries: RetryBaseDelay doubled up to
// MaxRetryDelay, without jitter (one bot's requests come one at a time),
// and a Retry-After up to MaxRetryDelay waited whole.
func (p *Provider) backoff() backoff.Policy {
	return backoff.Policy{Base: p.cfg.RetryBaseDelay, Max: p.cfg.MaxRetryDelay, MaxRetryAfter: p.cfg.MaxRetryDelay}
}

// errIdleTimeout is the cause of a request that received nothing for the
// idle timeout.
var errIdleTimeout = errors.New("idle timeout")

// progress is how far a request's answer got before it failed.
type progress struct {
	// text reports that text reached onText; tools that a tool call
	// began.
	text, tools bool
}

// attempt sends one request and reads its stream.
func (p *Provider) attempt(ctx context.Context, creq goopenai.ChatCompletionRequest, onText func(string)) (resp agent.Response, prog progress, err error) {
	headers := &capturedHeaders{}
	reqCtx, cancel := context.WithCancelCause(context.WithValue(ctx, headerCaptureKey{}, headers))
	defer cancel(nil)
	idle := time.AfterFunc(p.cfg.IdleTimeout, func() { cancel(errIdleTimeout) })
	defer idle.Stop()

	stream, err := p.client.CreateChatCompletionStream(reqCtx, creq)
	if err != nil {
		return agent.Response{}, prog, p.mapError(ctx, reqCtx, err, headers)
	}
	defer stream.Close()
	var text strings.Builder
	calls := &callAssembler{}
	finish := ""
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return agent.Response{}, prog, p.mapError(ctx, reqCtx, err, headers)
		}
		idle.Reset(p.cfg.IdleTimeout)
		if chunk.Usage != nil {
			resp.Usage = agent.Usage{
				PromptTokens:     chunk.Usage.PromptTokens,
				CompletionTokens: chunk.Usage.CompletionTokens,
				TotalTokens:      chunk.Usage.TotalTokens,
			}
			if d := chunk.Usage.PromptTokensDetails; d != nil {
				resp.Usage.CachedTokens = d.CachedTokens
			}
		}
		for _, choice := range chunk.Choices {
			if choice.Index != 0 {
				continue
			}
			if d := choice.Delta.Content; d != "" {
				text.WriteString(d)
				prog.text = true
				onText(d)
			}
			for _, tc := range choice.Delta.ToolCalls {
				prog.tools = true
				calls.add(tc)
			}
			if choice.FinishReason != "" {
				finish = string(choice.FinishReason)
			}
		}
	}
	if finish == "" {
		return agent.Response{}, prog, &agent.ProviderError{Message: "the answer stream ended before it was complete", Err: io.ErrUnexpectedEOF}
	}
	resp.Text = text.String()
	resp.ToolCalls = calls.calls()
	resp.FinishReason = finish
	return resp, prog, nil
}

// mapError turns a go-openai error into the agent's: the context's error
// when ctx ended, a timeout error when the request went idle, a
// *ProviderError for an error answer.
func (p *Provider) mapError(ctx, reqCtx context.Context, err error, headers *capturedHeaders) error {
	if ctx.Err() != nil {
		return fmt.Errorf("model request cancelled: %w", ctx.Err())
	}
	if errors.Is(context.Cause(reqCtx), errIdleTimeout) {
		return &agent.ProviderError{
			Message: fmt.Sprintf("no data from the model provider for %v", p.cfg.IdleTimeout),
			Err:     context.DeadlineExceeded,
		}
	}
	var apiErr *goopenai.APIError
	if errors.As(err, &apiErr) {
		pe := &agent.ProviderError{
			StatusCode: apiErr.HTTPStatusCode,
			Message:    apiErr.Message,
			Type:       apiErr.Type,
			RetryAfter: headers.retryAfter(time.Now()),
			Err:        err,
		}
		if apiErr.Code != nil {
			pe.Code = fmt.Sprint(apiErr.Code)
		}
		return pe
	}
	var reqErr *goopenai.RequestError
	if errors.As(err, &reqErr) {
		msg := strings.TrimSpace(string(reqErr.Body))
		if msg == "" {
			msg = http.StatusText(reqErr.HTTPStatusCode)
		}
		return &agent.ProviderError{
			StatusCode: reqErr.HTTPStatusCode,
			Message:    truncateRunes(msg, maxErrorBodyRunes),
			RetryAfter: headers.retryAfter(time.Now()),
			Err:        err,
		}
	}
	var urlErr *url.Error
	if errors.As(err, &urlErr) {
		// Its text starts with the method and the URL: only the cause goes
		// on.
		return &transportError{err: urlErr.Err}
	}
	var syntaxErr *json.SyntaxError
	if errors.As(err, &syntaxErr) {
		return &agent.ProviderError{Message: "the answer could not be read (invalid JSON)", Err: err}
	}
	return &transportError{err: err}
}

// transportError is a request that got no usable answer: the connection
// failed, was reset or closed early. Its text never holds the URL.
type transportError struct{ err error }

// Error returns "model provider: connection failed: <cause>".
func (e *transportError) Error() string { return "model provider: connection failed: " + e.err.Error() }

// Unwrap returns the cause.
func (e *transportError) Unwrap() error { return e.err }

// truncateRunes cuts s to at most n runes.
func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

// callAssembler puts tool calls together from stream deltas: each delta
// names its call by index (or, from servers that omit it, by a new id), and
// the arguments may be split anywhere.
type callAssembler struct {
	order []int
	byIdx map[int]*agent.ToolCall
	args  map[int]*strings.Builder
}

// add merges one delta.
func (a *callAssembler) add(tc goopenai.ToolCall) {
	if a.byIdx == nil {
		a.byIdx = make(map[int]*agent.ToolCall)
		a.args = make(map[int]*strings.Builder)
	}
	idx := -1
	switch {
	case tc.Index != nil:
		idx = *tc.Index
	case len(a.order) == 0:
		idx = 0
	default:
		last := a.order[len(a.order)-1]
		idx = last
		if tc.ID != "" && a.byIdx[last].ID != "" && a.byIdx[last].ID != tc.ID {
			idx = slices.Max(a.order) + 1
		}
	}
	call, ok := a.byIdx[idx]
	if !ok {
		call = &agent.ToolCall{}
		a.byIdx[idx] = call
		a.args[idx] = &strings.Builder{}
		a.order = append(a.order, idx)
	}
	if tc.ID != "" {
		call.ID = tc.ID
	}
	if tc.Function.Name != "" {
		call.Name += tc.Function.Name
	}
	a.args[idx].WriteString(tc.Function.Arguments)
}

// calls returns the assembled calls in index order.
func (a *callAssembler) calls() []agent.ToolCall {
	if len(a.order) == 0 {
		return nil
	}
	idxs := slices.Clone(a.order)
	slices.Sort(idxs)
	out := make([]agent.ToolCall, 0, len(idxs))
	for _, i := range idxs {
		c := *a.byIdx[i]
		c.Arguments = a.args[i].String()
		out = append(out, c)
	}
	return out
}

// buildChatRequest maps a Request to go-openai's: the system prompt, user
// messages (text, and images as data: URLs), assistant messages with their
// tool calls, and tool messages (text; the images of consecutive tool
// results follow them in one user message, since most servers reject images
// in tool messages).
func buildChatRequest(req agent.Request) goopenai.ChatCompletionRequest {
	creq := goopenai.ChatCompletionRequest{
		Model:         req.Model,
		Stream:        true,
		StreamOptions: &goopenai.StreamOptions{IncludeUsage: true},
	}
	if req.System != "" {
		creq.Messages = append(creq.Messages, goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleSystem, Content: req.System})
	}
	var pendingImages []agent.Content
	flushImages := func() {
		if len(pendingImages) == 0 {
			return
		}
		content := append([]agent.Content{agent.Text("Images returned by the tool calls above:")}, pendingImages...)
		creq.Messages = append(creq.Messages, userMessage(content))
		pendingImages = nil
	}
	for _, m := range req.Messages {
		if m.Role != agent.RoleTool {
			flushImages()
		}
		switch m.Role {
		case agent.RoleUser:
			creq.Messages = append(creq.Messages, userMessage(m.Content))
		case agent.RoleAssistant:
			cm := goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleAssistant, Content: agent.TextOf(m.Content)}
			for _, c := range m.ToolCalls {
				cm.ToolCalls = append(cm.ToolCalls, goopenai.ToolCall{
					ID: c.ID, Type: goopenai.ToolTypeFunction,
					Function: goopenai.FunctionCall{Name: c.Name, Arguments: c.Arguments},
				})
			}
			creq.Messages = append(creq.Messages, cm)
		case agent.RoleTool:
			text := agent.TextOf(m.Content)
			for _, c := range m.Content {
				if c.Type == agent.ImageContent {
					pendingImages = append(pendingImages, c)
				}
			}
			if text == "" {
				text = "(no output)"
				if len(pendingImages) > 0 {
					text = "(images follow)"
				}
			}
			creq.Messages = append(creq.Messages, goopenai.ChatCompletionMessage{
				Role: goopenai.ChatMessageRoleTool, Content: text, ToolCallID: m.ToolCallID,
			})
		}
	}
	flushImages()
	for _, t := range req.Tools {
		params := t.Parameters
		if len(params) == 0 {
			params = json.RawMessage(emptyParameters)
		}
		creq.Tools = append(creq.Tools, goopenai.Tool{
			Type: goopenai.ToolTypeFunction,
			Function: &goopenai.FunctionDefinition{
				Name: t.Name, Description: t.Description, Parameters: params,
			},
		})
	}
	return creq
}

// userMessage maps user content: a plain string when it is text only,
// else parts with the images as data: URLs.
func userMessage(content []agent.Content) goopenai.ChatCompletionMessage {
	cm := goopenai.ChatCompletionMessage{Role: goopenai.ChatMessageRoleUser}
	if !slices.ContainsFunc(content, func(c agent.Content) bool { return c.Type == agent.ImageContent }) {
		cm.Content = agent.TextOf(content)
		return cm
	}
	for _, c := range content {
		switch c.Type {
		case agent.TextContent:
			cm.MultiContent = append(cm.MultiContent, goopenai.ChatMessagePart{Type: goopenai.ChatMessagePartTypeText, Text: c.Text})
		case agent.ImageContent:
			cm.MultiContent = append(cm.MultiContent, goopenai.ChatMessagePart{
				Type:     goopenai.ChatMessagePartTypeImageURL,
				ImageURL: &goopenai.ChatMessageImageURL{URL: "data:" + c.MIMEType + ";base64," + base64.StdEncoding.EncodeToString(c.Data)},
			})
		}
	}
	return cm
}

// headerCaptureKey marks a request context that carries a
// *capturedHeaders.
type headerCaptureKey struct{}

// capturedHeaders keeps the retry headers of a request's response, which
// go-openai does not pass on with its errors.
type capturedHeaders struct {
	mu      sync.Mutex
	after   string
	afterMS string
}

// retryAfter parses the captured headers (retry-after-ms, else Retry-After
// in seconds or as an HTTP date), zero when there are none.
func (h *capturedHeaders) retryAfter(now time.Time) time.Duration {
	h.mu.Lock()
	defer h.mu.Unlock()
	if ms, err := strconv.ParseFloat(strings.TrimSpace(h.afterMS), 64); err == nil && ms > 0 {
		return time.Duration(ms * float64(time.Millisecond))
	}
	v := strings.TrimSpace(h.after)
	if v == "" {
		return 0
	}
	if secs, err := strconv.ParseFloat(v, 64); err == nil && secs > 0 {
		return time.Duration(secs * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// headerCapture is the adapter's transport: it records the retry headers of
// every response whose request context asks for them.
type headerCapture struct {
	base http.RoundTripper
}

// RoundTrip sends r and captures its response's retry headers.
func (t *headerCapture) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return resp, err
	}
	if h, ok := r.Context().Value(headerCaptureKey{}).(*capturedHeaders); ok {
		h.mu.Lock()
		h.after = resp.Header.Get("Retry-After")
		h.afterMS = resp.Header.Get("Retry-After-Ms")
		h.mu.Unlock()
	}
	return resp, nil
}

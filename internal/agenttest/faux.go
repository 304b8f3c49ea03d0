// Package agenttest holds test support for code built on the agent: a
// scripted model provider and a scripted tool.
package agenttest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// FauxResponse is one scripted answer of a [FauxProvider].
type FauxResponse struct {
	// Text is the answer's text, streamed to onText word by word.
	Text string
	// ToolCalls are the calls the answer makes; calls without an ID get
	// "faux_call_<n>".
	ToolCalls []agent.ToolCall
	// Usage is reported with the answer.
	Usage agent.Usage
	// Err, when non-nil, is returned instead of an answer (a
	// *agent.ProviderError for a provider failure).
	Err error
	// Func, when non-nil, answers instead of the fields above: it may
	// stream through onText, block until ctx is done, or fail.
	Func func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error)
}

// FauxText is a scripted text answer.
func FauxText(text string) FauxResponse { return FauxResponse{Text: text} }

// FauxToolCalls is a scripted answer that calls tools.
func FauxToolCalls(calls ...agent.ToolCall) FauxResponse { return FauxResponse{ToolCalls: calls} }

// FauxError is a scripted failure.
func FauxError(err error) FauxResponse { return FauxResponse{Err: err} }

// FauxFunc is a scripted answer computed by f.
func FauxFunc(f func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error)) FauxResponse {
	return FauxResponse{Func: f}
}

// FauxCall is a tool call of name with the JSON arguments args (an id is
// assigned when it is played).
func FauxCall(name, args string) agent.ToolCall { return agent.ToolCall{Name: name, Arguments: args} }

// FauxProvider is an [agent.Provider] for tests: it plays scripted responses in
// order, then the responder set with Handle, and records a deep copy of
// every request it receives. It is safe for concurrent use.
type FauxProvider struct {
	mu        sync.Mutex
	script    []FauxResponse
	responder func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error)
	requests  []agent.Request
	calls     int
}

// NewFauxProvider returns a faux provider that plays responses in order.
func NewFauxProvider(responses ...FauxResponse) *FauxProvider {
	return &FauxProvider{script: slices.Clone(responses)}
}

// Enqueue appends responses to the script.
func (f *FauxProvider) Enqueue(responses ...FauxResponse) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.script = append(f.script, responses...)
}

// Handle sets the function that answers once the script is empty (nil
// removes it). Without one, an unscripted request fails.
func (f *FauxProvider) Handle(fn func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.responder = fn
}

// Pending returns how many scripted responses are left.
func (f *FauxProvider) Pending() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.script)
}

// Requests returns deep copies of every request received so far, in order.
func (f *FauxProvider) Requests() []agent.Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]agent.Request, len(f.requests))
	for i, r := range f.requests {
		out[i] = r.Clone()
	}
	return out
}

// Complete records req and plays the next scripted response.
func (f *FauxProvider) Complete(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
	f.mu.Lock()
	f.requests = append(f.requests, req.Clone())
	var next FauxResponse
	var fn func(context.Context, agent.Request, func(string)) (agent.Response, error)
	switch {
	case len(f.script) > 0:
		next, f.script = f.script[0], f.script[1:]
		fn = next.Func
	case f.responder != nil:
		fn = f.responder
	default:
		f.mu.Unlock()
		return agent.Response{}, errors.New("faux provider: no scripted response")
	}
	f.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return agent.Response{}, err
	}
	if fn != nil {
		return fn(ctx, req.Clone(), onText)
	}
	if next.Err != nil {
		return agent.Response{}, next.Err
	}
	for _, word := range strings.SplitAfter(next.Text, " ") {
		if word != "" {
			onText(word)
		}
	}
	resp := agent.Response{Text: next.Text, Usage: next.Usage, FinishReason: "stop"}
	if len(next.ToolCalls) > 0 {
		resp.FinishReason = "tool_calls"
		f.mu.Lock()
		for _, c := range next.ToolCalls {
			if c.ID == "" {
				f.calls++
				c.ID = fmt.Sprintf("faux_call_%d", f.calls)
			}
			resp.ToolCalls = append(resp.ToolCalls, c)
		}
		f.mu.Unlock()
	}
	return resp, nil
}

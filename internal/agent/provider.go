package agent

import (
	"context"
	"time"
)

// Provider is a chat-completions model: it answers a request, streaming the
// text of the answer to onText as it arrives.
type Provider interface {
	Complete(ctx context.Context, req Request, onText func(delta string)) (Response, error)
}

// Request is one model call: the system prompt, the conversation and the
// tools the model may call. A request without tools (a summary) sets none.
type Request struct {
	Model    string
	System   string
	Messages []Message
	Tools    []ToolSpec
}

// Clone returns a deep copy of req: its messages, their content and the
// tools' schemas share no memory with req's.
func (req Request) Clone() Request {
	req.Messages = cloneMessages(req.Messages)
	tools := make([]ToolSpec, len(req.Tools))
	for i, t := range req.Tools {
		t.Parameters = cloneRaw(t.Parameters)
		tools[i] = t
	}
	if req.Tools != nil {
		req.Tools = tools
	}
	return req
}

// Response is the model's whole answer.
type Response struct {
	Text      string
	ToolCalls []ToolCall
	Usage     Usage
	// FinishReason is the provider's reason (stop, tool_calls, length).
	FinishReason string
	// Model is the model that answered when the provider fell back to
	// another than the request's; empty means the request's.
	Model string
}

// Usage is what the provider reported for one request.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
	TotalTokens      int `json:"total_tokens"`
	// CachedTokens are the prompt tokens the provider served from its
	// prompt cache (part of PromptTokens).
	CachedTokens int `json:"cached_tokens,omitempty"`
	// CostUSD is what the provider says the request cost, when it says
	// (Claude Code's total_cost_usd); zero otherwise.
	CostUSD float64 `json:"cost_usd,omitempty"`
	// Windows are the plan's usage windows the provider reported while it
	// answered (Claude Code's rate-limit events), none from most.
	Windows []PlanWindow `json:"windows,omitempty"`
}

// PlanWindow is one of a model plan's usage windows as its provider
// reported it: Claude Code's 5-hour and weekly limits.
type PlanWindow struct {
	// Name is the provider's name of the window ("five_hour", "seven_day").
	Name string `json:"name"`
	// Status is "allowed", "allowed_warning" or "rejected".
	Status string `json:"status"`
	// Utilization is the share used, 0 to 1 (0: not reported).
	Utilization float64 `json:"utilization,omitempty"`
	// Resets is when the window resets (zero: not reported).
	Resets time.Time `json:"resets,omitzero"`
}

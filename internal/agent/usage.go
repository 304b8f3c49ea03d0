package agent

import "context"

// UsageReport is one model response's usage, as the function given to
// [WithUsageRecorder] receives it.
type UsageReport struct {
	// SessionID and Scope name the session and the chat it serves.
	SessionID string
	Scope     string
	// Model is the model that answered: the one asked for, or the
	// provider's fallback (see [Response.Model]).
	Model string
	Usage Usage
}

// WithUsageRecorder sets a function called with the usage of every model
// response of every session: turns and summaries alike. It runs on the
// turn's goroutine with the request's context, so it must be quick.
func WithUsageRecorder(f func(ctx context.Context, r UsageReport)) Option {
	return func(c *config) { c.usageRecorder = f }
}

// reportUsage hands a response's usage to the recorder, when there is one.
func (s *Session) reportUsage(ctx context.Context, requested string, resp Response) {
	f := s.agent.cfg.usageRecorder
	if f == nil {
		return
	}
	model := resp.Model
	if model == "" {
		model = requested
	}
	f(ctx, UsageReport{SessionID: s.id, Scope: s.scope, Model: model, Usage: resp.Usage})
}

// add returns u plus o.
func (u Usage) add(o Usage) Usage {
	return Usage{
		PromptTokens:     u.PromptTokens + o.PromptTokens,
		CompletionTokens: u.CompletionTokens + o.CompletionTokens,
		TotalTokens:      u.TotalTokens + o.TotalTokens,
		CachedTokens:     u.CachedTokens + o.CachedTokens,
		CostUSD:          u.CostUSD + o.CostUSD,
		Windows:          latestWindows(u.Windows, o.Windows),
	}
}

// latestWindows returns o, the later report, unless it is empty: the
// windows are a state, not a count.
func latestWindows(u, o []PlanWindow) []PlanWindow {
	if len(o) > 0 {
		return o
	}
	return u
}

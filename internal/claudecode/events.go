package claudecode

import (
	"encoding/json"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// event is one line of claude's stream-json output; only the fields the
// provider reads are decoded.
type event struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`

	// system/init
	Tools        []string    `json:"tools"`
	MCPServers   []mcpStatus `json:"mcp_servers"`
	APIKeySource string      `json:"apiKeySource"`
	Version      string      `json:"claude_code_version"`

	// stream_event
	Event *streamEvent `json:"event"`

	// assistant and user
	Message *message `json:"message"`
	Error   string   `json:"error"`

	// result
	IsError      bool         `json:"is_error"`
	Result       string       `json:"result"`
	NumTurns     int          `json:"num_turns"`
	TotalCostUSD float64      `json:"total_cost_usd"`
	Usage        *resultUsage `json:"usage"`

	// rate_limit_event
	RateLimit *RateLimit `json:"rate_limit_info"`
}

// mcpStatus is an MCP server as system/init lists it.
type mcpStatus struct {
	Name   string `json:"name"`
	Status string `json:"status"`
}

// streamEvent is the Messages API streaming event a stream_event carries.
type streamEvent struct {
	Type  string `json:"type"`
	Delta *struct {
		Type string `json:"type"`
		Text string `json:"text"`
	} `json:"delta"`
}

// message is an assistant or user message.
type message struct {
	Content []block `json:"content"`
}

// block is one content block of a message.
type block struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	ID    string          `json:"id"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// resultUsage is the token usage a result reports for the whole turn.
type resultUsage struct {
	InputTokens              int `json:"input_tokens"`
	OutputTokens             int `json:"output_tokens"`
	CacheCreationInputTokens int `json:"cache_creation_input_tokens"`
	CacheReadInputTokens     int `json:"cache_read_input_tokens"`
}

// RateLimit is one of the plan's usage windows as claude's rate_limit_event
// reports it: the 5-hour window ("five_hour") or a weekly one ("seven_day",
// "seven_day_opus", ...).
type RateLimit struct {
	// Status is "allowed", "allowed_warning" or "rejected".
	Status string `json:"status"`
	// Type names the window.
	Type string `json:"rateLimitType,omitempty"`
	// ResetsAt is when the window resets, in Unix seconds (0: not said).
	ResetsAt int64 `json:"resetsAt,omitempty"`
	// Utilization is the share of the window used, 0 to 1, when reported.
	Utilization float64 `json:"utilization,omitempty"`
}

// planWindows returns the windows reported, the latest of each, as the
// agent's usage carries them; nil for none.
func planWindows(reported []RateLimit) []agent.PlanWindow {
	var out []agent.PlanWindow
	at := map[string]int{}
	for _, r := range reported {
		w := agent.PlanWindow{Name: r.Type, Status: r.Status, Utilization: r.Utilization, Resets: r.Resets()}
		if i, ok := at[r.Type]; ok {
			out[i] = w
			continue
		}
		at[r.Type] = len(out)
		out = append(out, w)
	}
	return out
}

// Resets returns ResetsAt as a time (the zero time when not said).
func (r RateLimit) Resets() time.Time {
	if r.ResetsAt == 0 {
		return time.Time{}
	}
	return time.Unix(r.ResetsAt, 0)
}

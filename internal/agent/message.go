package agent

import "time"

// Role says who a [Message] is from.
type Role string

// The roles of a conversation.
const (
	RoleUser      Role = "user"
	RoleAssistant Role = "assistant"
	RoleTool      Role = "tool"
)

// ToolCall is one call of a tool the model asked for.
type ToolCall struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the JSON text the model wrote, unparsed.
	Arguments string `json:"arguments"`
}

// Message is one entry of a conversation, as persisted in the transcript and
// sent to the model.
type Message struct {
	Role    Role      `json:"role"`
	Content []Content `json:"content,omitempty"`
	// ToolCalls are the calls an assistant message asks for.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// ToolCallID and ToolName identify the call a tool message answers.
	ToolCallID string `json:"tool_call_id,omitempty"`
	ToolName   string `json:"tool_name,omitempty"`
	// IsError marks a tool message that reports a failure.
	IsError bool `json:"is_error,omitempty"`
	// Details is the tool result's structured data (redacted like its text).
	Details map[string]any `json:"details,omitempty"`
	Time    time.Time      `json:"time"`
}

// TextOf returns the text of every text block of content, joined by newlines.
func TextOf(content []Content) string {
	n := 0
	for _, c := range content {
		if c.Type == TextContent {
			n += len(c.Text) + 1
		}
	}
	b := make([]byte, 0, n)
	for _, c := range content {
		if c.Type != TextContent {
			continue
		}
		if len(b) > 0 {
			b = append(b, '\n')
		}
		b = append(b, c.Text...)
	}
	return string(b)
}

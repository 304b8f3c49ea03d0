package tools

import "github.com/volcanic/telegram-agent/internal/agent"

// All returns the four built-in tools in the order the model is offered
// them: bash (configured by opts), read, write and edit.
func All(opts ...BashOption) []agent.Tool {
	return []agent.Tool{NewBash(opts...), NewRead(), NewWrite(), NewEdit()}
}

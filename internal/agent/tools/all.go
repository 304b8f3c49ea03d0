package tools

import "github.com/volcanic/telegram-agent/internal/agent"

// All returns the four built-in tools in the order the model is offered
// them: bash (configured by opts), read, write and edit (confined to the
// view of WithView, when opts hold one).
func All(opts ...BashOption) []agent.Tool {
	cfg := defaultBashConfig()
	for _, o := range opts {
		o(&cfg)
	}
	files := fileAccess{view: cfg.view}
	return []agent.Tool{NewBash(opts...), newRead(files), writeTool{files: files}.tool(), editTool{files: files}.tool()}
}

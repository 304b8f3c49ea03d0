package claudecode

import (
	"encoding/json"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// The bridge and the bot speak over the Unix socket one request per
// connection: the bridge writes one JSON line (a wireRequest), the bot
// answers with one (a wireTools or a wireResult) and closes. A request
// whose secret matches no running turn gets no answer at all.

// Operations of a wireRequest.
const (
	opTools = "tools"
	opCall  = "call"
)

// wireRequest is what the bridge asks.
type wireRequest struct {
	Secret    string          `json:"secret"`
	Op        string          `json:"op"`
	Name      string          `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// wireTools answers opTools: the turn's tools.
type wireTools struct {
	Tools []agent.ToolSpec `json:"tools"`
}

// wireResult answers opCall: the redacted result.
type wireResult struct {
	Content []agent.Content `json:"content"`
	IsError bool            `json:"is_error,omitempty"`
}

// mcpConfig is the per-turn MCP config file claude reads with
// --mcp-config. Bridge is the provider's own section, which claude ignores:
// the bridge reads the socket and the secret from it, so the secret is
// never in an environment or an argument list.
type mcpConfig struct {
	MCPServers map[string]mcpServer `json:"mcpServers"`
	Bridge     *bridgeSection       `json:"telegramBotBridge,omitempty"`
}

// mcpServer is one stdio server of an MCP config file.
type mcpServer struct {
	Type    string            `json:"type"`
	Command string            `json:"command"`
	Args    []string          `json:"args"`
	Env     map[string]string `json:"env"`
}

// bridgeSection tells the bridge where the bot listens and the turn's
// secret.
type bridgeSection struct {
	Socket string `json:"socket"`
	Secret string `json:"secret"`
}

// ServerName is the bridge's MCP server name: claude calls its tools
// mcp__host__<tool>.
const ServerName = "host"

// toolPrefix is what claude puts before a bridge tool's name.
const toolPrefix = "mcp__" + ServerName + "__"

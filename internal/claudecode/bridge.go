package claudecode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// BridgeCommand is the hidden sub-command of the bot's binary that claude
// starts as its MCP server: `telegram-bot claude-bridge <mcp config file>`.
const BridgeCommand = "claude-bridge"

// RunBridge is the bridge: the MCP server (over stdin and stdout) that
// serves a turn's tools to claude. args are what follows [BridgeCommand]:
// the MCP config file, which holds the bot's socket and the turn's secret.
// It asks the bot for the turn's tools, offers them, and forwards every call
// to the bot, which runs it; it runs until claude closes stdin, and
// returns the exit code.
func RunBridge(ctx context.Context, args []string, stdin io.ReadCloser, stdout io.WriteCloser, stderr io.Writer) int {
	if err := runBridge(ctx, args, stdin, stdout); err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

func runBridge(ctx context.Context, args []string, stdin io.ReadCloser, stdout io.WriteCloser) error {
	if len(args) != 1 {
		return errors.New("claudecode: bridge: usage: " + BridgeCommand + " <mcp config file>")
	}
	data, err := os.ReadFile(args[0])
	if err != nil {
		return fmt.Errorf("claudecode: bridge: %w", err)
	}
	var cfg mcpConfig
	if err := json.Unmarshal(data, &cfg); err != nil || cfg.Bridge == nil {
		return errors.New("claudecode: bridge: the MCP config file has no bridge section")
	}
	b := *cfg.Bridge
	var list wireTools
	if err := ask(ctx, b.Socket, wireRequest{Secret: b.Secret, Op: opTools}, &list); err != nil {
		return err
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "telegram-bot", Version: "1"}, nil)
	for _, spec := range list.Tools {
		if err := addTool(server, b, spec); err != nil {
			return err
		}
	}
	err = server.Run(ctx, &mcp.IOTransport{Reader: stdin, Writer: stdout})
	if err != nil && !errors.Is(err, io.EOF) && ctx.Err() == nil {
		return fmt.Errorf("claudecode: bridge: %w", err)
	}
	return nil
}

// addTool offers spec and forwards its calls to the bot.
func addTool(server *mcp.Server, b bridgeSection, spec agent.ToolSpec) (err error) {
	schema := json.RawMessage(spec.Parameters)
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object","properties":{}}`)
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("claudecode: bridge: tool %q: %v", spec.Name, r)
		}
	}()
	server.AddTool(&mcp.Tool{Name: spec.Name, Description: spec.Description, InputSchema: schema},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var res wireResult
			err := ask(ctx, b.Socket, wireRequest{Secret: b.Secret, Op: opCall, Name: spec.Name, Arguments: req.Params.Arguments}, &res)
			if err != nil {
				return nil, err
			}
			return toMCP(res), nil
		})
	return nil
}

// toMCP is a tool result in MCP's form.
func toMCP(res wireResult) *mcp.CallToolResult {
	out := &mcp.CallToolResult{IsError: res.IsError, Content: []mcp.Content{}}
	for _, c := range res.Content {
		switch c.Type {
		case agent.ImageContent:
			out.Content = append(out.Content, &mcp.ImageContent{Data: c.Data, MIMEType: c.MIMEType})
		default:
			out.Content = append(out.Content, &mcp.TextContent{Text: c.Text})
		}
	}
	return out
}

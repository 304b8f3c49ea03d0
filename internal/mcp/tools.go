package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/imagesafe"
)

// tool is one MCP server's tool, as the model sees it.
type tool struct {
	ext    *Extension
	server ServerConfig
	remote string
	spec   agent.ToolSpec
}

// newTool describes t of server sc to the model under name.
func newTool(ext *Extension, sc ServerConfig, name string, t *mcp.Tool) (*tool, error) {
	params, err := toolSchema(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %q: %w", t.Name, err)
	}
	desc := strings.TrimSpace(t.Description)
	if desc == "" {
		desc = strings.TrimSpace(t.Title)
	}
	if desc == "" {
		desc = fmt.Sprintf("The %s tool of the MCP server %s.", t.Name, sc.Name)
	}
	return &tool{
		ext:    ext,
		server: sc,
		remote: t.Name,
		spec:   agent.ToolSpec{Name: name, Description: desc, Parameters: params},
	}, nil
}

// Spec returns the tool's name, the server's description and its input
// schema.
func (t *tool) Spec() agent.ToolSpec { return t.spec }

// Execute calls the tool on the session's own server process. A spawn,
// connection or protocol failure is an error result with the message; the
// loop redacts whatever comes back.
func (t *tool) Execute(ctx context.Context, call *agent.Call) (agent.Result, error) {
	if call.Context == nil {
		return agent.ErrorResult("MCP tools run only inside a session"), nil
	}
	conn, err := t.ext.connection(call.Context.SessionID, t.server)
	if err != nil {
		return agent.ErrorResult(fmt.Sprintf("MCP server %q: %v", t.server.Name, err)), nil
	}
	res, err := conn.call(ctx, call.Context, t.remote, call.Arguments)
	if err != nil {
		return agent.ErrorResult(fmt.Sprintf("MCP server %q, tool %q: %v", t.server.Name, t.remote, err)), nil
	}
	return convertResult(t.server.Name, t.remote, res, call.Context.Redactor()), nil
}

// convertResult maps an MCP tool result onto the agent's: text as it is,
// images made safe by imagesafe (checked against red), other content
// described in text, isError as an error result.
func convertResult(server, remote string, res *mcp.CallToolResult, red imagesafe.Checker) agent.Result {
	out := agent.Result{
		IsError: res.IsError,
		Details: map[string]any{"mcp_server": server, "mcp_tool": remote},
	}
	for _, c := range res.Content {
		out.Content = append(out.Content, convertContent(c, red))
	}
	if len(out.Content) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			out.Content = append(out.Content, agent.Text(string(b)))
		}
	}
	if len(out.Content) == 0 {
		text := "(no output)"
		if res.IsError {
			text = "(the tool failed without a message)"
		}
		out.Content = append(out.Content, agent.Text(text))
	}
	return out
}

// convertContent maps one content block. An image is decoded strictly and
// re-encoded from its pixels; one that does not decode, or still holds a
// secret, is replaced by a note saying why.
func convertContent(c mcp.Content, red imagesafe.Checker) agent.Content {
	switch c := c.(type) {
	case *mcp.TextContent:
		return agent.Text(c.Text)
	case *mcp.ImageContent:
		img, err := imagesafe.Sanitize(c.Data, red)
		if err != nil {
			return agent.Text(fmt.Sprintf("[image %s, %d bytes, not shown: %v]", c.MIMEType, len(c.Data), err))
		}
		return agent.Image(img.MIMEType, img.Data)
	case *mcp.AudioContent:
		return agent.Text(fmt.Sprintf("[audio %s, %d bytes, not shown]", c.MIMEType, len(c.Data)))
	case *mcp.ResourceLink:
		return agent.Text(fmt.Sprintf("[resource link %q: %s]", c.Name, c.URI))
	case *mcp.EmbeddedResource:
		if r := c.Resource; r != nil {
			if r.Text != "" || r.Blob == nil {
				return agent.Text(fmt.Sprintf("[resource %s]\n%s", r.URI, r.Text))
			}
			return agent.Text(fmt.Sprintf("[resource %s, %s, %d bytes, not shown]", r.URI, r.MIMEType, len(r.Blob)))
		}
	}
	b, err := json.Marshal(c)
	if err != nil {
		return agent.Text(fmt.Sprintf("[%T content, not shown]", c))
	}
	return agent.Text(string(b))
}

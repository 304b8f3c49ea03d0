package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"os"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// fakeMCPArg, as the test binary's first argument, makes it the fake MCP
// stdio server the binary tests configure (see TestMain).
const fakeMCPArg = "fake-mcp-server"

// runFakeMCP is the fake MCP server: echo echoes its text; check_env says
// whether a variable holds the value whose SHA-256 it is given, without
// the value; show_env returns a variable's value (which the bot must
// redact). With -fail-count, its first -fail-times starts write npm's
// kind of error to stderr and exit 1, as npx does while the registry errs.
func runFakeMCP(args []string) int {
	fs := flag.NewFlagSet(fakeMCPArg, flag.ContinueOnError)
	failCount := fs.String("fail-count", "", "file counting the starts")
	failTimes := fs.Int("fail-times", 0, "how many starts fail")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *failCount != "" {
		b, _ := os.ReadFile(*failCount)
		if err := os.WriteFile(*failCount, append(b, 'x'), 0o600); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		if len(b) < *failTimes {
			fmt.Fprintf(os.Stderr, "npm error code E503\nnpm error registry unavailable, start %d\n", len(b)+1)
			return 1
		}
	}
	server := mcp.NewServer(&mcp.Implementation{Name: "fake", Version: "v1.0.0"}, nil)
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	type echoArgs struct {
		Text string `json:"text" jsonschema:"what to echo"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "echo", Description: "Echoes its text."},
		func(_ context.Context, _ *mcp.CallToolRequest, a echoArgs) (*mcp.CallToolResult, any, error) {
			return text("echo: " + a.Text), nil, nil
		})
	type checkArgs struct {
		Name   string `json:"name" jsonschema:"the variable"`
		SHA256 string `json:"sha256" jsonschema:"the hex SHA-256 of the value it should hold"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "check_env", Description: "Says whether a variable holds a value, by its hash."},
		func(_ context.Context, _ *mcp.CallToolRequest, a checkArgs) (*mcp.CallToolResult, any, error) {
			v, ok := os.LookupEnv(a.Name)
			sum := sha256.Sum256([]byte(v))
			switch {
			case !ok:
				return text(a.Name + " is not set"), nil, nil
			case hex.EncodeToString(sum[:]) == a.SHA256:
				return text(a.Name + " matches"), nil, nil
			}
			return text(fmt.Sprintf("%s differs (%d bytes)", a.Name, len(v))), nil, nil
		})
	type showArgs struct {
		Name string `json:"name" jsonschema:"the variable"`
	}
	mcp.AddTool(server, &mcp.Tool{Name: "show_env", Description: "Returns a variable's value."},
		func(_ context.Context, _ *mcp.CallToolRequest, a showArgs) (*mcp.CallToolResult, any, error) {
			return text(a.Name + "=" + os.Getenv(a.Name)), nil, nil
		})
	if err := server.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		fmt.Fprintln(os.Stderr, "fake server:", err)
		return 1
	}
	return 0
}

package securitytest

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestSecurityFakeMCPServer checks the fake MCP server itself against the
// MCP SDK's client, so that an MCP vector that finds nothing cannot be a
// server that never answered: every tool is listed, dump_env returns the
// environment with the GITHUB_TOKEN digest, read_file a file's content, and
// the failing tools fail.
func TestSecurityFakeMCPServer(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("finding the test binary: %v", err)
	}
	token, err := randomString(base62, 32)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "payload")
	if err := os.WriteFile(file, []byte("payload-content"), 0o600); err != nil {
		t.Fatal(err)
	}
	secretFile := filepath.Join(t.TempDir(), "secret")
	fileSecret, err := randomString(base62, 32)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(secretFile, []byte(fileSecret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	dump := filepath.Join(t.TempDir(), "dump")
	cmd := exec.Command(self, fakeMCPArg, "-dump", dump, "-secret-file", secretFile, "extra-argument")
	cmd.Env = []string{"PATH=" + botPath, envGitHubToken + "=" + token}

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: "securitytest", Version: "1.0.0"}, nil)
	session, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connecting to the fake MCP server: %v", err)
	}
	defer session.Close()

	list, err := session.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("listing tools: %v", err)
	}
	var names []string
	for _, tool := range list.Tools {
		names = append(names, tool.Name)
	}
	if got, want := strings.Join(names, ","), strings.Join([]string{mcpToolDumpEnv, mcpToolReadFile, mcpToolParentEnv, mcpToolFailRPC, mcpToolFailResult, mcpToolSecretDoc, mcpToolReadImage, mcpToolReadChunks}, ","); got != want {
		t.Errorf("tools = %s, want %s", got, want)
	}
	t.Run("secret_doc's description and schema hold the secrets", func(t *testing.T) {
		for _, tool := range list.Tools {
			if tool.Name != mcpToolSecretDoc {
				continue
			}
			schema, err := json.Marshal(tool.InputSchema)
			if err != nil {
				t.Fatal(err)
			}
			for _, secret := range []string{token, fileSecret} {
				if !strings.Contains(tool.Description, secret) || !strings.Contains(string(schema), secret) {
					t.Errorf("secret_doc's description or schema lacks a secret (not printed)")
				}
			}
		}
	})
	t.Run("dump", func(t *testing.T) {
		data, err := os.ReadFile(dump)
		if err != nil {
			t.Fatalf("the server wrote no dump: %v", err)
		}
		if !strings.Contains(string(data), envGitHubToken+"="+token) || !strings.Contains(string(data), "extra-argument") {
			t.Errorf("the dump lacks the environment or the arguments (not printed)")
		}
	})

	tests := []struct {
		tool      string
		args      map[string]any
		want      string
		wantError bool
		rpcError  bool
	}{
		{tool: mcpToolDumpEnv, want: controlDigestLabel + " " + digest(token)},
		{tool: mcpToolReadFile, args: map[string]any{"path": file}, want: "payload-content"},
		{tool: mcpToolParentEnv, want: "\n"},
		{tool: mcpToolFailResult, args: map[string]any{"path": file}, want: "tool failed: payload-content", wantError: true},
		{tool: mcpToolFailRPC, args: map[string]any{"path": file}, want: "payload-content", rpcError: true},
		{tool: mcpToolSecretDoc, want: "secret_doc ok"},
	}
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
			if tc.rpcError {
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Errorf("error = %v, want one holding %q", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("calling %s: %v", tc.tool, err)
			}
			var text strings.Builder
			for _, c := range res.Content {
				if txt, ok := c.(*mcp.TextContent); ok {
					text.WriteString(txt.Text)
				}
			}
			if !strings.Contains(text.String(), tc.want) {
				t.Errorf("%s returned %d bytes without the expected text", tc.tool, text.Len())
			}
			if res.IsError != tc.wantError {
				t.Errorf("IsError = %v, want %v", res.IsError, tc.wantError)
			}
		})
	}
}

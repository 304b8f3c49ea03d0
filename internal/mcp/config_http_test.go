package mcp

import "testing"

// remoteLookup is hostLookup plus a value with a line break.
func remoteLookup(name string) (string, bool) {
	if name == "WITH_NEWLINE" {
		return "line-one\r\nInjected: yes", true
	}
	return hostLookup(name)
}

// literalCredential is a credential written in the configuration itself.
const literalCredential = "literal-CREDENTIAL-0123456789"

func TestLoadRemote(t *testing.T) {
	const literal = literalCredential
	tests := []struct {
		name        string
		body        string
		want        []ServerConfig
		wantSecrets []string
		warnHas     [][]string
		errHas      []string
	}{
		{
			name: "url and headers",
			body: `{"mcpServers": {"github": {"url": "https://api.githubcopilot.com/mcp/", "headers": {"authorization": "Bearer ${GITHUB_TOKEN}", "X-MCP-Toolsets": "repos,issues"}}}}`,
			want: []ServerConfig{{Name: "github", URL: "https://api.githubcopilot.com/mcp/",
				Headers: map[string]string{"Authorization": "Bearer " + explicitToken, "X-Mcp-Toolsets": "repos,issues"}}},
			wantSecrets: []string{explicitToken},
		},
		{
			name: "a variable in the url",
			body: `{"mcpServers": {"s": {"url": "https://mcp.example.com/${SERVICE_PASSWORD}/mcp"}}}`,
			want: []ServerConfig{{Name: "s", URL: "https://mcp.example.com/" + configuredSecret + "/mcp"}},
			// The value is a secret wherever it was expanded.
			wantSecrets: []string{configuredSecret},
		},
		{
			name: "a literal credential",
			body: `{"mcpServers": {"s": {"url": "https://mcp.example.com/", "headers": {"Authorization": "Bearer ` + literal + `", "X-Api-Key": "` + literal + `"}}}}`,
			want: []ServerConfig{{Name: "s", URL: "https://mcp.example.com/",
				Headers: map[string]string{"Authorization": "Bearer " + literal, "X-Api-Key": literal}}},
			wantSecrets: []string{"Bearer " + literal, literal},
			warnHas: [][]string{
				{`server "s"`, "headers Authorization", "${VAR}"},
				{`server "s"`, "headers X-Api-Key", "${VAR}"},
			},
		},
		{
			name: "plain http to loopback",
			body: `{"mcpServers": {"a": {"url": "http://127.0.0.1:8931/mcp", "headers": {"X-Token": "${GITHUB_TOKEN}"}}, "b": {"url": "http://localhost/mcp"}, "c": {"url": "http://[::1]:9/"}}}`,
			want: []ServerConfig{
				{Name: "a", URL: "http://127.0.0.1:8931/mcp", Headers: map[string]string{"X-Token": explicitToken}},
				{Name: "b", URL: "http://localhost/mcp"},
				{Name: "c", URL: "http://[::1]:9/"},
			},
			wantSecrets: []string{explicitToken},
			// A sidecar on loopback is an ordinary set-up: no warning,
			// with headers or without.
		},
		{
			name:    "plain http elsewhere without credentials",
			body:    `{"mcpServers": {"s": {"url": "http://mcp-sidecar:8080/mcp"}}}`,
			want:    []ServerConfig{{Name: "s", URL: "http://mcp-sidecar:8080/mcp"}},
			warnHas: [][]string{{`server "s"`, "mcp-sidecar", "not encrypted", "https://"}},
		},
		{
			name:   "plain http elsewhere with headers",
			body:   `{"mcpServers": {"s": {"url": "http://mcp.example.com/mcp", "headers": {"Authorization": "Bearer ${GITHUB_TOKEN}"}}}}`,
			errHas: []string{`server "s"`, "mcp.example.com", "clear text", "https://"},
		},
		{
			name:   "plain http elsewhere with a variable in the url",
			body:   `{"mcpServers": {"s": {"url": "http://mcp.example.com/${GITHUB_TOKEN}"}}}`,
			errHas: []string{`server "s"`, "clear text"},
		},
		{name: "url and command", body: `{"mcpServers": {"s": {"command": "npx", "url": "https://mcp.example.com/"}}}`, errHas: []string{`server "s"`, `both "command" and "url"`, "not both"}},
		{name: "url and env", body: `{"mcpServers": {"s": {"url": "https://mcp.example.com/", "env": {"A": "b"}}}}`, errHas: []string{`server "s"`, `"args" and "env" are for a stdio "command"`}},
		{name: "headers without url", body: `{"mcpServers": {"s": {"command": "x", "headers": {"A": "b"}}}}`, errHas: []string{`server "s"`, `"headers" are for a Streamable HTTP "url"`}},
		{name: "neither", body: `{"mcpServers": {"s": {"disabled": false}}}`, errHas: []string{`server "s"`, "no command", `"url"`}},
		{name: "host secret in a header", body: `{"mcpServers": {"s": {"url": "https://mcp.example.com/", "headers": {"Authorization": "Bearer ${TELEGRAM_BOT_TOKEN}"}}}}`, errHas: []string{`server "s"`, "headers Authorization", "TELEGRAM_BOT_TOKEN", "never handed"}},
		{name: "host key in a disabled server's header", body: `{"mcpServers": {"s": {"url": "https://mcp.example.com/", "disabled": true, "headers": {"X-Key": "${OPENAI_API_KEY}"}}}}`, errHas: []string{`server "s"`, "headers X-Key", "OPENAI_API_KEY", "never handed"}},
		{name: "host secret in the url", body: `{"mcpServers": {"s": {"url": "https://mcp.example.com/?key=${OPENAI_API_KEY}"}}}`, errHas: []string{`server "s"`, "url", "OPENAI_API_KEY", "never handed"}},
		{name: "unset variable in a header", body: `{"mcpServers": {"s": {"url": "https://mcp.example.com/", "headers": {"X-Key": "${NOT_SET}"}}}}`, errHas: []string{"headers X-Key", "NOT_SET is not set"}},
		{
			name: "unset variable in a disabled server",
			body: `{"mcpServers": {"s": {"url": "https://mcp.example.com/", "disabled": true, "headers": {"X-Key": "${NOT_SET}"}}}}`,
			want: []ServerConfig{{Name: "s", URL: "https://mcp.example.com/", Disabled: true, Headers: map[string]string{}}},
		},
		{
			name: "unset variable in a disabled server's url",
			body: `{"mcpServers": {"s": {"url": "https://mcp.example.com/${NOT_SET}", "disabled": true}}}`,
			want: []ServerConfig{{Name: "s", URL: "https://mcp.example.com/${NOT_SET}", Disabled: true}},
		},
		{name: "a line break in a value", body: `{"mcpServers": {"s": {"url": "https://mcp.example.com/", "headers": {"X-Key": "${WITH_NEWLINE}"}}}}`, errHas: []string{"headers X-Key", "line break"}},
		{name: "a reserved header", body: `{"mcpServers": {"s": {"url": "https://mcp.example.com/", "headers": {"mcp-session-id": "x", "Content-Type": "y"}}}}`, errHas: []string{"headers mcp-session-id", "headers Content-Type", "sets this header itself"}},
		{name: "a bad header name", body: `{"mcpServers": {"s": {"url": "https://mcp.example.com/", "headers": {"X Key": "x"}}}}`, errHas: []string{`headers X Key`, "not a valid header name"}},
		{name: "credentials in the url", body: `{"mcpServers": {"s": {"url": "https://user:pw@mcp.example.com/"}}}`, errHas: []string{"url", `send them in "headers"`}},
		{name: "another scheme", body: `{"mcpServers": {"s": {"url": "ws://mcp.example.com/"}}}`, errHas: []string{"url", "https://"}},
		{name: "no host", body: `{"mcpServers": {"s": {"url": "https:///mcp"}}}`, errHas: []string{"url", "no host"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg, err := load(tt.body, remoteLookup, asHostSecrets(hostSecrets), noTrustCheck)
			checkLoaded(t, cfg, err, loadWant{servers: tt.want, secrets: tt.wantSecrets, warnHas: tt.warnHas, errHas: tt.errHas})
		})
	}
}

package mcp

import (
	"strconv"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// literalNotionToken is a credential written into a server's env inside a
// JSON value, as the Notion server's own guide configures it
// (OPENAPI_MCP_HEADERS). Failure messages never print it.
const literalNotionToken = "ntn_literalHEADERtoken0123456789"

// TestLiteralEnvCredentialsAreSecrets writes credentials literally into a
// server's env under names no deny rule matches: inside a JSON value of
// headers, as "Bearer ..." alone, and as a URL's password; and an ordinary
// value, which must stay as it is. The server
// echoes its environment (as a failing HTTP client's error may quote its
// headers): every credential must come back redacted, because the loader
// made it a secret.
func TestLiteralEnvCredentialsAreSecrets(t *testing.T) {
	headers := `{\"Authorization\": \"Bearer ` + literalNotionToken + `\", \"Notion-Version\": \"2022-06-28\"}`
	body := `{"mcpServers": {"fake": {"command": ` + strconv.Quote(testBinary(t)) + `, "args": [` + strconv.Quote(fakeServerArg) + `],
		"env": {"OPENAPI_MCP_HEADERS": "` + headers + `", "UPSTREAM_HEADER_VALUE": "Bearer literal-BEARER-value-9876", "MODE": "production-ready",
		"UPSTREAM_URI": "postgres://app:literal-URI-password-5432@db.internal/app"}}}}`
	cfg, err := Load(body, testLookup, nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	h := newFauxHarness(t, cfg, cfg.Secrets)
	s := h.session(t, "literal")
	out := agent.TextOf(h.call(t, s, "mcp__fake__env", `{}`).Content)
	if !strings.Contains(out, "MODE=production-ready") {
		t.Error("an ordinary value of the server's env was redacted or lost")
	}
	for _, c := range []struct{ what, value string }{
		{"the token in a JSON value of headers", literalNotionToken},
		{"a bearer credential", "literal-BEARER-value-9876"},
		{"a URL's password", "literal-URI-password-5432"},
	} {
		checkAbsent(t, "the env tool's result", c.what, out, c.value)
	}
}

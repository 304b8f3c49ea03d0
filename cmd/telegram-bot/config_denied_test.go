package main

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// TestParseDeniedValuesAreSecrets checks that the value of every inherited
// variable a deny rule removes (8 bytes or more) is a secret the redactor
// knows, so the same value in a workspace file comes back redacted; that a
// shorter one, or a variable Allow keeps, is not among the denied; that the
// same token under a denied GITHUB_TOKEN and an allowed GH_TOKEN is no
// configuration error; and that an MCP server's env may still expand a
// denied variable (it is not one of the host's own secrets).
func TestParseDeniedValuesAreSecrets(t *testing.T) {
	const (
		dbPassword = "fake-db-password-0041"
		pat        = "github_pat_fake_denied_0042"
		stripe     = "sk_live_fake_stripe_0043"
	)
	environ := map[string]string{
		"PATH":          "/usr/bin:/bin",
		"DB_PASSWORD":   dbPassword + "\n",
		"GITHUB_TOKEN":  pat,
		"GH_TOKEN":      pat,
		"STRIPE_KEY":    stripe,
		"SHORT_TOKEN":   "1234567",
		"ORDINARY_NAME": "an ordinary value",
	}
	e := goodEnv()
	e.ProcessEnvAllow = "GH_TOKEN"
	c, err := e.Parse(environ)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if diff := cmp.Diff([]string{"DB_PASSWORD", "GITHUB_TOKEN", "STRIPE_KEY"}, c.DeniedRedacted); diff != "" {
		t.Errorf("DeniedRedacted (-want +got):\n%s", diff)
	}
	red := redactor.New(c.Policy.SecretValues)
	for name, v := range map[string]string{"DB_PASSWORD": dbPassword, "GITHUB_TOKEN": pat, "STRIPE_KEY": stripe} {
		if got := red.Redact("DB=" + v + "\n"); got != "DB="+redactor.Token+"\n" {
			t.Errorf("%s's value (length %d) is not redacted", name, len(v))
		}
	}
	for _, v := range []string{"1234567", "an ordinary value"} {
		if slices.Contains(c.Policy.SecretValues, v) {
			t.Errorf("a value of length %d no deny rule removes (or too short) became a secret", len(v))
		}
	}
	ctx := prepareBash(t, c, environ)
	for _, name := range []string{"DB_PASSWORD", "GITHUB_TOKEN", "STRIPE_KEY"} {
		if _, ok := ctx.Env[name]; ok {
			t.Errorf("%s reaches agent processes", name)
		}
	}
	if ctx.Env["GH_TOKEN"] != pat {
		t.Error("the allowed GH_TOKEN does not reach agent processes whole")
	}

	// Without the allowed GH_TOKEN, the token comes from GITHUB_TOKEN alone.
	delete(environ, "GH_TOKEN")
	e.ProcessEnvAllow = ""
	e.MCPConfig = `{"mcpServers":{"github":{"command":"github-mcp","env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"${GITHUB_TOKEN}"}}}}`
	if c, err = e.Parse(environ); err != nil {
		t.Fatalf("Parse: %v", err)
	}
	mcpCfg, err := loadMCP(c, func(name string) (string, bool) { v, ok := environ[name]; return v, ok })
	if err != nil {
		t.Fatalf("loadMCP refuses ${GITHUB_TOKEN}: %v", err)
	}
	if len(mcpCfg.Servers) != 1 || mcpCfg.Servers[0].Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != pat {
		t.Error("the MCP server does not get GITHUB_TOKEN's value")
	}
}

// TestParseUserIDHint checks that a @username or another non-numeric entry
// in TELEGRAM_ALLOWED_USER_IDS gets, once, a hint where to find an id.
func TestParseUserIDHint(t *testing.T) {
	tests := []struct{ in, want string }{
		{"@me", "TELEGRAM_ALLOWED_USER_IDS: entry 1 is a @username, not a numeric user id" + userIDHint},
		{"42,alice,@bob", "TELEGRAM_ALLOWED_USER_IDS: entry 2 is not a numeric user id" + userIDHint + "\nTELEGRAM_ALLOWED_USER_IDS: entry 3 is a @username, not a numeric user id"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			e := goodEnv()
			e.AllowedUserIDs = tt.in
			_, err := e.Parse(nil)
			if err == nil {
				t.Fatal("Parse accepted the ids")
			}
			if diff := cmp.Diff(tt.want, err.Error()); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
		})
	}
}

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/asusertest"
	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

func TestLoadMCPCountsDeniedEnvValuesAsSecrets(t *testing.T) {
	cfg := goodEnvConfig(t)
	cfg.MCPConfig = `{"mcpServers":{
		"github": {"command": "gh-mcp", "env": {"GITHUB_TOKEN": "ghp_literal_token_in_config_0017", "GITHUB_HOST": "github.example.com"}},
		"db": {"command": "db-mcp", "env": {"DB_PASSWORD": "short", "MODE": "read-only-replica"}}
	}}`
	got, err := loadMCP(cfg, func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatalf("loadMCP: %v", err)
	}
	if !slices.Contains(got.Secrets, "ghp_literal_token_in_config_0017") {
		t.Error("a literal GITHUB_TOKEN in the configuration is not a secret")
	}
	for _, notSecret := range []string{"github.example.com", "read-only-replica", "short"} {
		if slices.Contains(got.Secrets, notSecret) {
			t.Errorf("%q (not under a denied name, or too short) became a secret", notSecret)
		}
	}
}

// goodEnvConfig returns the checked configuration of goodEnv.
func goodEnvConfig(t *testing.T) Config {
	t.Helper()
	c, err := goodEnv().Parse(nil)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	return c
}

// TestAgentWrittenDefaultMCPConfig runs the built doctor as an
// unprivileged user whose agent dir holds an mcp.json that user wrote (as
// the agent could), against fake Telegram and model servers so that
// nothing else is wrong. Without MCP_CONFIG the file is never read (there
// is no default path): doctor names it in a warning and is ready (exit 0).
// The same file named by MCP_CONFIG is refused: a PROBLEM, exit 1. Without
// the file there is nothing to warn about.
func TestAgentWrittenDefaultMCPConfig(t *testing.T) {
	if !asusertest.Needed() {
		t.Skip("needs root to run the doctor as another user")
	}
	bin := asusertest.PublicCopy(t, botBinary(t), 0o755)
	const token = "123456:fake-token-mcp-default-0018"
	tg := telegramtest.New(t, telegramtest.WithToken(token))
	oa := openaitest.New(t)
	const warning = "mcp.json is never read: MCP_CONFIG is not set"
	for _, tt := range []struct {
		name      string
		noFile    bool
		explicit  bool
		want      string
		wantCode  int
		wantNoMCP bool
	}{
		{name: "default path", want: warning},
		{name: "explicit path", explicit: true, want: "PROBLEM: mcp: %s: refusing an MCP configuration file", wantCode: 1},
		{name: "no file", noFile: true, want: "none configured (MCP_CONFIG is not set)", wantNoMCP: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			home := filepath.Join(filepath.Dir(bin), strings.ReplaceAll(tt.name, " ", "-"))
			agentDir := filepath.Join(home, "data")
			file := filepath.Join(agentDir, "mcp.json")
			steps := []error{os.MkdirAll(agentDir, 0o755), os.Chown(home, asusertest.UID, asusertest.GID), os.Chown(agentDir, asusertest.UID, asusertest.GID)}
			if !tt.noFile {
				steps = append(steps,
					os.WriteFile(file, []byte(`{"mcpServers":{"x":{"command":"bash"}}}`), 0o644),
					os.Chown(file, asusertest.UID, asusertest.GID))
			}
			for _, err := range steps {
				if err != nil {
					t.Fatal(err)
				}
			}
			cmd := exec.Command(bin, "doctor")
			cmd.Dir = home
			cmd.Env = []string{
				"PATH=/usr/bin:/bin",
				"HOME=" + home,
				"TELEGRAM_BOT_TOKEN=" + token,
				"TELEGRAM_ALLOWED_USER_IDS=42",
				"TELEGRAM_API_URL=" + tg.URL(),
				"OPENAI_API_KEY=sk-fake-mcp-default-0123456789",
				"OPENAI_BASE_URL=" + oa.URL(),
				"AGENT_DIR=" + agentDir,
				"WORKSPACE_DIR=" + filepath.Join(home, "workspace"),
			}
			if tt.explicit {
				cmd.Env = append(cmd.Env, "MCP_CONFIG="+file)
			}
			asusertest.Drop(cmd)
			out, err := asusertest.CombinedOutput(t, cmd)
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			want := tt.want
			if strings.Contains(want, "%s") {
				want = fmt.Sprintf(want, file)
			}
			if !strings.Contains(string(out), want) {
				t.Errorf("the doctor's output lacks %q:\n%s", want, out)
			}
			if code != tt.wantCode {
				t.Errorf("the doctor exited %d, want %d:\n%s", code, tt.wantCode, out)
			}
			if tt.wantNoMCP && (strings.Contains(string(out), "never read") || strings.Contains(string(out), "refusing")) {
				t.Errorf("without an mcp.json the doctor warns about one:\n%s", out)
			}
		})
	}
}

// TestLoadMCPRemoteHeaders loads Streamable HTTP servers through the host's
// real secret set: a header expanding an ordinary variable hands over its
// value and makes it a secret; a header naming one of the host's own
// secrets is refused, as an env entry is.
func TestLoadMCPRemoteHeaders(t *testing.T) {
	cfg := goodEnvConfig(t)
	lookup := func(name string) (string, bool) {
		v, ok := map[string]string{
			"TELEGRAM_BOT_TOKEN": testBotToken,
			"OPENAI_API_KEY":     testOpenAI,
			"GITHUB_MCP_TOKEN":   "github_pat_fake_header_token_0031",
		}[name]
		return v, ok
	}
	cfg.MCPConfig = `{"mcpServers":{"github":{"url":"https://api.githubcopilot.com/mcp/","headers":{"Authorization":"Bearer ${GITHUB_MCP_TOKEN}"}}}}`
	got, err := loadMCP(cfg, lookup)
	if err != nil {
		t.Fatalf("loadMCP: %v", err)
	}
	if !slices.Contains(got.Secrets, "github_pat_fake_header_token_0031") {
		t.Error("the value a header expanded is not a secret")
	}
	for _, name := range []string{"TELEGRAM_BOT_TOKEN", "OPENAI_API_KEY"} {
		cfg.MCPConfig = `{"mcpServers":{"github":{"url":"https://api.githubcopilot.com/mcp/","headers":{"X-Key":"${` + name + `}"}}}}`
		_, err := loadMCP(cfg, lookup)
		if err == nil {
			t.Errorf("a header expanding %s was accepted", name)
			continue
		}
		msg := err.Error()
		if strings.Contains(msg, testBotToken) || strings.Contains(msg, testOpenAI) {
			t.Errorf("the refusal of %s holds a host secret's value (not printed)", name)
			continue
		}
		if !strings.Contains(msg, "headers X-Key") || !strings.Contains(msg, name) || !strings.Contains(msg, "never handed to an MCP server") {
			t.Errorf("the refusal does not name the header and %s: %s", name, msg)
		}
	}
}

// TestLoadMCPExpandsAllowedVariables: a variable PROCESS_ENV_ALLOW lets
// through to agent processes (GH_TOKEN, which a deny glob matches) may be
// handed to a server with ${GH_TOKEN}, as the agent processes get it, and
// its value stays a secret; the host's own secrets are refused, and the
// refusal names which one (never the value).
func TestLoadMCPExpandsAllowedVariables(t *testing.T) {
	const ghToken = "ghp_allowed_for_the_mcp_server_0031"
	environ := map[string]string{"PATH": "/usr/bin:/bin", "GH_TOKEN": ghToken, "TELEGRAM_BOT_TOKEN": testBotToken, "OPENAI_API_KEY": testOpenAI}
	lookup := func(name string) (string, bool) { v, ok := environ[name]; return v, ok }
	e := goodEnv()
	e.ProcessEnvAllow = "GH_TOKEN"
	cfg, err := e.Parse(environ)
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if !slices.Contains(cfg.Passed, "GH_TOKEN") {
		t.Fatalf("GH_TOKEN is not among the variables PROCESS_ENV_ALLOW lets through: %v", cfg.Passed)
	}
	cfg.MCPConfig = `{"mcpServers":{"github":{"command":"gh-mcp","env":{"GITHUB_PERSONAL_ACCESS_TOKEN":"${GH_TOKEN}"}}}}`
	got, err := loadMCP(cfg, lookup)
	if err != nil {
		t.Fatalf("loadMCP refused ${GH_TOKEN}, which agent processes get: %v", err)
	}
	if len(got.Servers) != 1 || got.Servers[0].Env["GITHUB_PERSONAL_ACCESS_TOKEN"] != ghToken {
		t.Error("the server's env does not hold GH_TOKEN's value (not printed)")
	}
	if !slices.Contains(got.Secrets, ghToken) {
		t.Error("GH_TOKEN's value, handed to a server, is not among the secrets to redact")
	}
	for _, tt := range []struct{ ref, want string }{
		{"TELEGRAM_BOT_TOKEN", "the value of TELEGRAM_BOT_TOKEN"},
		{"OPENAI_API_KEY", "the value of OPENAI_API_KEY"},
	} {
		cfg.MCPConfig = `{"mcpServers":{"x":{"command":"x","env":{"K":"${` + tt.ref + `}"}}}}`
		_, err := loadMCP(cfg, lookup)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("${%s}: loadMCP = %v, want a refusal naming %q", tt.ref, err, tt.want)
		}
		if err != nil && (strings.Contains(err.Error(), testBotToken) || strings.Contains(err.Error(), testOpenAI)) {
			t.Errorf("${%s}: the refusal holds a secret value", tt.ref)
		}
	}
}

package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	botmcp "github.com/volcanic/telegram-agent/internal/mcp"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// doctorEnviron is the inherited environment the doctor's policy sees: the
// configured secrets, one under an innocent name, and ordinary variables.
func doctorEnviron() map[string]string {
	return map[string]string{
		"PATH":                      "/usr/bin:/bin",
		"HOME":                      "/home/bot",
		"TELEGRAM_BOT_TOKEN":        testBotToken,
		"OPENAI_API_KEY":            testOpenAI,
		"DB_PASSWORD":               "fake-db-password-0006",
		"COOLIFY_ALIAS":             testBotToken,
		"MY_INNOCENT":               testInnocent,
		"GH_TOKEN":                  "ghp_fake_allowed_token_0007",
		"AWS_SECRET_ACCESS_KEY":     "fake-aws-secret-access-key-0012",
		"MY_APIKEY_PATH":            "/etc/app/key.pem",
		"STRIPE_KEY":                "sk_live_fake_stripe_key_0022",
		"DATABASE_URL":              "postgres://app:hunter2hunter2@db/prod",
		"TELEGRAM_ALLOWED_USER_IDS": "42",
	}
}

// onlineFakes points e at a fake Bot API that accepts its token and a fake
// model provider that lists its model, so the connectivity checks pass.
func onlineFakes(t *testing.T, e Env) Env {
	t.Helper()
	tg := telegramtest.New(t, telegramtest.WithToken(e.BotToken))
	provider := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer "+e.OpenAIKey {
			http.Error(w, `{"error":{"message":"no"}}`, http.StatusUnauthorized)
			return
		}
		fmt.Fprintf(w, `{"data":[{"id":%q}]}`, e.OpenAIModel)
	}))
	t.Cleanup(provider.Close)
	e.APIURL = tg.URL()
	e.OpenAIBaseURL = provider.URL + "/v1"
	return e
}

func runDoctorWith(t *testing.T, e Env, probe func(context.Context, *spawnpolicy.Policy) error) (string, int) {
	t.Helper()
	return runDoctorIn(t, e, doctorEnviron(), probe)
}

// runDoctorIn runs the doctor with environ as the process environment.
func runDoctorIn(t *testing.T, e Env, environ map[string]string, probe func(context.Context, *spawnpolicy.Policy) error) (string, int) {
	t.Helper()
	if e.BotToken != "" {
		e = onlineFakes(t, e)
	}
	if e.AgentAllowRoot == "" {
		// The tests run as root, with AGENT_DIRs of root's: the bot
		// would refuse to start (TestDoctorRootWithoutAUser checks it).
		e.AgentAllowRoot = "1"
	}
	var out bytes.Buffer
	code := doctor(context.Background(), &out, doctorDeps{
		loadEnv: func() (Env, error) { return e, nil },
		lookup: func(name string) (string, bool) {
			v, ok := environ[name]
			return v, ok
		},
		environ: func() map[string]string { return environ },
		probe:   probe,
		client:  &http.Client{},
	})
	return out.String(), code
}

func assertNoSecrets(t *testing.T, out string) {
	t.Helper()
	for name, v := range doctorEnviron() {
		if len(v) < 8 || name == "PATH" || name == "HOME" || name == "TELEGRAM_ALLOWED_USER_IDS" {
			continue
		}
		if strings.Contains(out, v) {
			t.Errorf("the doctor's output holds the value of %s (length %d)", name, len(v))
		}
	}
}

func TestDoctorGoodConfiguration(t *testing.T) {
	e := goodEnv()
	e.AgentDir = filepath.Join(t.TempDir(), "data")
	e.WorkspaceDir = filepath.Join(t.TempDir(), "workspace")
	e.ProcessEnvAllow = "GH_TOKEN"
	e.ProcessEnvSecrets = "MY_INNOCENT"
	e.FallbackModels = "gpt-4.1-nano"
	e.ModelPrices = "gpt-4.1-mini=0.40/1.60/0.10"
	e.UsageLimit = "200k"
	out, code := runDoctorWith(t, e, func(context.Context, *spawnpolicy.Policy) error { return nil })
	if code != 0 {
		t.Fatalf("doctor exit code = %d, want 0; output:\n%s", code, out)
	}
	for _, want := range []string{
		"fallback models (OPENAI_FALLBACK_MODELS): gpt-4.1-nano",
		"priced models (MODEL_PRICES): gpt-4.1-mini",
		"daily limit per chat (USAGE_DAILY_LIMIT): 200,000 tokens",
		"Process environment: ",
		"allow: GH_TOKEN",
		"secret values: 8 distinct, from TELEGRAM_BOT_TOKEN, OPENAI_API_KEY, MY_INNOCENT, DATABASE_URL, AWS_SECRET_ACCESS_KEY, DB_PASSWORD, STRIPE_KEY, GH_TOKEN",
		"GH_TOKEN: passed to agent processes; its value is redacted",
		"TELEGRAM_BOT_TOKEN (TELEGRAM_BOT_TOKEN)",
		"DB_PASSWORD",
		"DB_PASSWORD (*_PASSWORD: removed and redacted)",
		"COOLIFY_ALIAS (COOLIFY_ALIAS)",
		"MY_INNOCENT",
		"works: a hardened probe process reads back not dumpable",
		"bash: ",
		"time zone database: present",
		"AGENT_DIR " + e.AgentDir + ": writable",
		"Telegram: the token belongs to @",
		"AWS_SECRET_ACCESS_KEY",
		"STRIPE_KEY (*_KEY: removed and redacted)",
		"DATABASE_URL (DATABASE_URL)",
		"keep these variables although they look secret: MY_APIKEY_PATH (",
		"model provider: answers at 127.0.0.1",
		"users who are not allowed: told their id once a day (STRANGER_REPLY=on)",
		"risky: the chat is asked before the commands the built-in rules match; no answer within 10m0s denies",
		"Ready",
	} {
		if !strings.Contains(strings.Join(strings.Fields(out), " "), want) {
			t.Errorf("output lacks %q; output:\n%s", want, out)
		}
	}
	if strings.Contains(out, "GH_TOKEN  (") {
		t.Errorf("GH_TOKEN is allowed but listed as removed; output:\n%s", out)
	}
	assertNoSecrets(t, out)
}

// TestDoctorUseNotSee checks the gh recipe, PROCESS_ENV_ALLOW=GH_TOKEN
// alone: the doctor says GH_TOKEN is passed with its value redacted, warns
// of nothing about it, and never prints the value.
func TestDoctorUseNotSee(t *testing.T) {
	const ghToken = "github_pat_fake_doctor_0034"
	e := goodEnv()
	e.AgentDir = filepath.Join(t.TempDir(), "data")
	e.WorkspaceDir = filepath.Join(t.TempDir(), "workspace")
	e.ProcessEnvAllow = "GH_TOKEN"
	environ := map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/home/bot", "GH_TOKEN": ghToken}
	out, code := runDoctorIn(t, e, environ, func(context.Context, *spawnpolicy.Policy) error { return nil })
	if code != 0 {
		t.Fatalf("doctor exit code = %d, want 0; output:\n%s", code, out)
	}
	if !strings.Contains(out, "  GH_TOKEN: passed to agent processes; its value is redacted\n") {
		t.Errorf("output lacks the GH_TOKEN line; output:\n%s", out)
	}
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "GH_TOKEN") && (strings.Contains(line, "warning") || strings.Contains(line, "PROBLEM")) {
			t.Errorf("the doctor complains about GH_TOKEN: %q", line)
		}
	}
	if strings.Contains(out, ghToken) {
		t.Error("the doctor's output holds GH_TOKEN's value")
	}
}

func TestDoctorBadConfiguration(t *testing.T) {
	e := goodEnv()
	e.BotToken = ""
	e.AllowedUserIDs = testOpenAI
	e.DefaultTimeZone = "Nowhere/Land"
	out, code := runDoctorWith(t, e, func(context.Context, *spawnpolicy.Policy) error { return nil })
	if code != 1 {
		t.Fatalf("doctor exit code = %d, want 1; output:\n%s", code, out)
	}
	for _, want := range []string{"TELEGRAM_BOT_TOKEN is required", "TELEGRAM_ALLOWED_USER_IDS: entry 1", `DEFAULT_TIMEZONE "Nowhere/Land"`, "Not ready: 3 problem(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q; output:\n%s", want, out)
		}
	}
	assertNoSecrets(t, out)
}

func TestDoctorReportsBrokenHardeningAndDirs(t *testing.T) {
	e := goodEnv()
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	e.AgentDir = file
	e.WorkspaceDir = t.TempDir()
	out, code := runDoctorWith(t, e, func(context.Context, *spawnpolicy.Policy) error { return errors.New("probe reported \"dumpable\"") })
	if code != 1 {
		t.Fatalf("doctor exit code = %d, want 1; output:\n%s", code, out)
	}
	for _, want := range []string{"hardening does not work on this host", "AGENT_DIR " + file, "Not ready: "} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q; output:\n%s", want, out)
		}
	}
}

func TestDoctorMCPAndJobs(t *testing.T) {
	agentDir := t.TempDir()
	mcpJSON := `{"mcpServers": {
		"broken": {"command": "/nonexistent/mcp-server"},
		"off": {"command": "whatever", "disabled": true}
	}}`
	if err := os.WriteFile(filepath.Join(agentDir, "mcp.json"), []byte(mcpJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	jobsJSON := `{"version": 1, "jobs": [{"id": "0000beef", "name": "morning summary", "target": "42", "schedule": "0 9 * * *",
		"prompt": "summarise", "created": "2026-11-01T09:00:00Z"}]}`
	jobsPath := filepath.Join(agentDir, "jobs.json")
	if err := os.WriteFile(jobsPath, []byte(jobsJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	e := goodEnv()
	e.AgentDir = agentDir
	e.WorkspaceDir = t.TempDir()
	e.MCPConfig = filepath.Join(agentDir, "mcp.json")
	out, code := runDoctorWith(t, e, func(context.Context, *spawnpolicy.Policy) error { return nil })
	if code != 1 {
		t.Fatalf("doctor exit code = %d, want 1 (a broken MCP server); output:\n%s", code, out)
	}
	for _, want := range []string{"MCP server broken does not work", "off: disabled", "0000beef", "morning summary", "chat 42", "Not ready: 1 problem(s)"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q; output:\n%s", want, out)
		}
	}
	assertNoSecrets(t, out)
}

// TestDoctorWarnsOfAnMCPServerTheAgentCanReplace checks that the doctor,
// as the running bot's log does, warns of a server whose script lies in
// the workspace, where the agent could replace it, and not of a disabled
// one.
func TestDoctorWarnsOfAnMCPServerTheAgentCanReplace(t *testing.T) {
	agentDir, workspace := t.TempDir(), t.TempDir()
	mcpJSON := `{"mcpServers": {
		"planted": {"command": "/bin/sh", "args": ["server.sh"]},
		"parked": {"command": "/bin/sh", "args": ["parked.sh"], "disabled": true}
	}}`
	if err := os.WriteFile(filepath.Join(agentDir, "mcp.json"), []byte(mcpJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	e := goodEnv()
	e.AgentDir = agentDir
	e.WorkspaceDir = workspace
	e.MCPConfig = filepath.Join(agentDir, "mcp.json")
	out, _ := runDoctorWith(t, e, func(context.Context, *spawnpolicy.Policy) error { return nil })
	want := "MCP server planted: " + botmcp.PlantableWarning + " (server.sh)"
	if !strings.Contains(out, want) {
		t.Errorf("output lacks the warning for the server in the workspace; output:\n%s", out)
	}
	if strings.Contains(out, "MCP server parked: ") {
		t.Errorf("output warns of a disabled server; output:\n%s", out)
	}
	assertNoSecrets(t, out)
}

func TestDoctorCorruptJobsFile(t *testing.T) {
	agentDir := t.TempDir()
	jobsPath := filepath.Join(agentDir, "jobs.json")
	corrupt := []byte(`{"jobs": [`)
	if err := os.WriteFile(jobsPath, corrupt, 0o600); err != nil {
		t.Fatal(err)
	}
	e := goodEnv()
	e.AgentDir = agentDir
	e.WorkspaceDir = t.TempDir()
	out, code := runDoctorWith(t, e, func(context.Context, *spawnpolicy.Policy) error { return nil })
	if code != 1 || !strings.Contains(out, jobsPath) {
		t.Fatalf("doctor exit code = %d, want 1 naming %s; output:\n%s", code, jobsPath, out)
	}
	got, err := os.ReadFile(jobsPath)
	if err != nil || !bytes.Equal(got, corrupt) {
		t.Errorf("the doctor changed the corrupt jobs file (err %v)", err)
	}
}

func TestDoctorRemoteMCP(t *testing.T) {
	const token = "ghp_fake_allowed_token_0007" // GH_TOKEN in doctorEnviron
	var mu sync.Mutex
	var auth []string
	server := mcp.NewServer(&mcp.Implementation{Name: "remote", Version: "v1.0.0"}, nil)
	mcp.AddTool(server, &mcp.Tool{Name: "ping", Description: "Answers pong."},
		func(context.Context, *mcp.CallToolRequest, struct{}) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "pong"}}}, nil, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return server }, nil)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		auth = append(auth, r.Header.Get("Authorization"))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)

	e := goodEnv()
	e.AgentDir = t.TempDir()
	e.WorkspaceDir = t.TempDir()
	e.MCPConfig = fmt.Sprintf(`{"mcpServers": {
		"remote": {"url": %q, "headers": {"Authorization": "Bearer ${GH_TOKEN}"}},
		"gone": {"url": "http://127.0.0.1:1/mcp"}
	}}`, srv.URL+"/mcp/"+token)
	out, code := runDoctorWith(t, e, func(context.Context, *spawnpolicy.Policy) error { return nil })
	if code != 1 {
		t.Fatalf("doctor exit code = %d, want 1 (an unreachable MCP server); output:\n%s", code, out)
	}
	for _, want := range []string{
		"remote: ok, 1 tool(s) over Streamable HTTP at " + srv.URL,
		"MCP server gone over Streamable HTTP at http://127.0.0.1:1 does not work",
		"value(s) passed to servers on purpose",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q; output:\n%s", want, out)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(auth) == 0 || auth[0] != "Bearer "+token {
		t.Errorf("the server got no Authorization header with the token (%d request(s); value not printed)", len(auth))
	}
	assertNoSecrets(t, out)
}

// TestDoctorShowsCutShortJobs puts in jobs.json, beside a scheduled job,
// two one-shot jobs a restart cut short (marked fired), one named after
// the base64 form of a configured secret where the doctor's cut of a name
// falls inside it, and a scheduled job whose id, target and outcome are
// secrets: the doctor counts and lists the cut-short jobs apart, as jobs
// the next start tells their chat of, and prints no piece of a secret.
func TestDoctorShowsCutShortJobs(t *testing.T) {
	agentDir := t.TempDir()
	encoded := base64.StdEncoding.EncodeToString([]byte(testOpenAI))
	jobsJSON := `{"version": 1, "jobs": [
  {"id": "0000beef", "name": "morning summary", "target": "42", "schedule": "0 9 * * *", "prompt": "summarise", "created": "2026-11-01T09:00:00Z"},
  {"id": "` + testOpenAI + `", "name": "forged", "target": "` + testBotToken + `", "schedule": "0 9 * * *", "prompt": "p", "created": "2026-11-01T09:00:00Z", "last_outcome": "` + testOpenAI + `"},
  {"id": "0000c001", "name": "call mum", "target": "42", "schedule": "2026-11-30 09:00", "at": "2026-11-30T08:00:00Z", "prompt": "p", "created": "2026-11-01T09:00:00Z", "fired": "2026-11-30T08:00:00Z"},
  {"id": "0000c002", "name": "` + strings.Repeat("w", 30) + encoded + `", "target": "43", "schedule": "2026-11-30 10:00", "at": "2026-11-30T09:00:00Z", "prompt": "p", "created": "2026-11-01T09:00:00Z", "fired": "2026-11-30T09:00:00Z"}
]}`
	if err := os.WriteFile(filepath.Join(agentDir, "jobs.json"), []byte(jobsJSON), 0o600); err != nil {
		t.Fatal(err)
	}
	e := goodEnv()
	e.AgentDir = agentDir
	e.WorkspaceDir = t.TempDir()
	out, _ := runDoctorWith(t, e, func(context.Context, *spawnpolicy.Policy) error { return nil })
	for _, want := range []string{
		"2 job(s) in", "0000beef", "morning summary", "\"forged\"",
		"2 one-shot job(s) a restart cut short, to be told to their chat at the next start:",
		"0000c001  prompt   chat 42  \"call mum\"  (due 2026-11-30T08:00:00Z)", "0000c002",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q; output:\n%s", want, out)
		}
	}
	const piece = 8
	for i := 0; i+piece <= len(encoded); i++ {
		if strings.Contains(out, encoded[i:i+piece]) {
			t.Fatalf("the doctor's output holds %d bytes of a secret's base64 form (%d bytes) from offset %d", piece, len(encoded), i)
		}
	}
	assertNoSecrets(t, out)
}

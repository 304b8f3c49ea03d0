package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// mcpResponder is a model for the MCP binary tests: "call <tool> <json>"
// calls the tool when the request offers it (and answers "no tool <tool>"
// when not), a tool result is answered with "tool said: <result>", and
// anything else is echoed.
func mcpResponder(req openaitest.ChatRequest) openaitest.Response {
	last := req.LastMessage()
	if last.Role == "tool" {
		return openaitest.Text("tool said: " + last.Text())
	}
	text := last.Text()
	_, call, ok := strings.Cut(text, "call ")
	if !ok {
		return openaitest.Text("echo: " + text)
	}
	name, args, _ := strings.Cut(strings.TrimSpace(call), " ")
	if !slices.ContainsFunc(req.Tools, func(t openaitest.Tool) bool { return t.Name == name }) {
		return openaitest.Text("no tool " + name)
	}
	return openaitest.ToolCalls(openaitest.ToolCall{Name: name, Arguments: args})
}

// fakeMCPEntry is the MCP_CONFIG entry of the fake server (this test
// binary) with args and env, whose directory the server's sandbox view
// may read and whose writable directory it may write.
func fakeMCPEntry(t *testing.T, writable string, env map[string]string, args ...string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	entry := map[string]any{
		"command": exe,
		"args":    append([]string{fakeMCPArg}, args...),
		"env":     env,
		"sandbox": map[string][]string{"read": {filepath.Dir(exe)}, "write": {writable}},
	}
	b, err := json.Marshal(entry)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// A server that fails twice (npm's registry erring) and then answers does
// not hold up polling, and its tools join the chat's running session: the
// chat's first turn has none, a turn after the server answered calls one.
// /status and the health check show its state.
func TestBinaryMCPServerThatFailsTwiceJoinsTheRunningSession(t *testing.T) {
	tg := telegramtest.New(t)
	oa := openaitest.New(t, openaitest.WithResponder(mcpResponder))
	agentDir, ws, scratch := t.TempDir(), t.TempDir(), t.TempDir()
	count := filepath.Join(scratch, "starts")
	cfg := `{"mcpServers":{"flaky":` + fakeMCPEntry(t, scratch, nil, "-fail-count", count, "-fail-times", "2") + `}}`
	p := startBot(t, procEnv(tg, oa.URL(), agentDir, ws, "MCP_CONFIG="+cfg))
	p.waitLog("polling Telegram")
	tg.SendText(procUser, procUser, "call mcp__flaky__echo {\"text\":\"too early\"}")
	waitMessage(t, tg, procUser, "no tool mcp__flaky__echo")
	if line := p.waitLog("mcp: server discovered"); !strings.Contains(line, "attempts=3") {
		t.Errorf("the server was discovered in another try than the third: %s", line)
	}
	if log := p.log(); !strings.Contains(log, "npm error code E503") || !strings.Contains(log, "retry_in=") {
		t.Errorf("the failed tries were not logged with the server's own stderr and the back-off:\n%s", log)
	}
	tg.SendText(procUser, procUser, "call mcp__flaky__echo {\"text\":\"back again\"}")
	waitMessage(t, tg, procUser, "tool said: echo: back again")
	tg.SendText(procUser, procUser, "/status")
	waitMessage(t, tg, procUser, "MCP flaky: ready, 3 tool(s)")

	cmd := exec.Command(botBinary(t), "healthcheck")
	cmd.Env = []string{"AGENT_DIR=" + agentDir}
	if out, err := cmd.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "healthy" {
		t.Errorf("healthcheck once the server answered = %v, %q; want healthy", err, out)
	}
	if code, _ := p.terminate(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// A server that never answers leaves the bot answering and the health
// check healthy but degraded, naming the server and its stderr.
func TestBinaryMCPServerThatFailsIsDegraded(t *testing.T) {
	tg := telegramtest.New(t)
	oa := openaitest.New(t, openaitest.WithResponder(mcpResponder))
	agentDir, ws, scratch := t.TempDir(), t.TempDir(), t.TempDir()
	count := filepath.Join(scratch, "starts")
	cfg := `{"mcpServers":{"down":` + fakeMCPEntry(t, scratch, nil, "-fail-count", count, "-fail-times", "1000") + `}}`
	p := startBot(t, procEnv(tg, oa.URL(), agentDir, ws, "MCP_CONFIG="+cfg))
	p.waitLog("mcp: server unavailable")
	tg.SendText(procUser, procUser, "still there?")
	waitMessage(t, tg, procUser, "echo: ")
	cmd := exec.Command(botBinary(t), "healthcheck")
	cmd.Env = []string{"AGENT_DIR=" + agentDir}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Errorf("healthcheck with a failed MCP server exited %v, want 0: %s", err, out)
	}
	for _, want := range []string{"healthy, degraded: MCP server down failed after", "npm error code E503"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("healthcheck output %q lacks %q", out, want)
		}
	}
	tg.SendText(procUser, procUser, "/status")
	waitMessage(t, tg, procUser, "MCP down: failed after")
	if code, _ := p.terminate(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

// ${GH_TOKEN} in a server's env, with GH_TOKEN in PROCESS_ENV_ALLOW,
// starts the bot; the server gets the value, and a tool result holding it
// reaches the model redacted.
func TestBinaryMCPServerGetsAnAllowedVariable(t *testing.T) {
	const token = "ghp_binaryTestToken0123456789abcdefXYZ"
	sum := sha256.Sum256([]byte(token))
	tg := telegramtest.New(t)
	oa := openaitest.New(t, openaitest.WithResponder(mcpResponder))
	agentDir, ws, scratch := t.TempDir(), t.TempDir(), t.TempDir()
	cfg := `{"mcpServers":{"gh":` + fakeMCPEntry(t, scratch, map[string]string{"GITHUB_PERSONAL_ACCESS_TOKEN": "${GH_TOKEN}"}) + `}}`
	p := startBot(t, procEnv(tg, oa.URL(), agentDir, ws, "MCP_CONFIG="+cfg, "GH_TOKEN="+token, "PROCESS_ENV_ALLOW=GH_TOKEN"))
	p.waitLog("mcp: server discovered")
	tg.SendText(procUser, procUser, fmt.Sprintf(`call mcp__gh__check_env {"name":"GITHUB_PERSONAL_ACCESS_TOKEN","sha256":%q}`, hex.EncodeToString(sum[:])))
	waitMessage(t, tg, procUser, "tool said: GITHUB_PERSONAL_ACCESS_TOKEN matches")
	tg.SendText(procUser, procUser, `call mcp__gh__show_env {"name":"GITHUB_PERSONAL_ACCESS_TOKEN"}`)
	waitMessage(t, tg, procUser, "tool said: GITHUB_PERSONAL_ACCESS_TOKEN=[REDACTED]")
	for _, req := range oa.ChatRequests() {
		for _, m := range req.Messages {
			if strings.Contains(m.Text(), token) {
				t.Errorf("a %s message sent to the model holds GH_TOKEN's value", m.Role)
			}
		}
	}
	for _, m := range tg.Messages(procUser) {
		if strings.Contains(m.Visible, token) {
			t.Error("a chat message holds GH_TOKEN's value")
		}
	}
	if code, _ := p.terminate(); code != 0 {
		t.Errorf("exit %d", code)
	}
	if strings.Contains(p.log(), token) {
		t.Error("the bot's log holds GH_TOKEN's value")
	}
}

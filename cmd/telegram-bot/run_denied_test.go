package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// TestBinaryRedactsADeniedValueInTheWorkspace runs the built bot with
// DB_PASSWORD in its environment (a deny rule removes it from agent
// processes) and the same value in a workspace .env file the agent reads:
// the tool result the model gets shows [REDACTED] in its place, and the
// value reaches neither the model provider nor Telegram.
func TestBinaryRedactsADeniedValueInTheWorkspace(t *testing.T) {
	const dbPassword = "fake-denied-db-password-0044"
	tg := telegramtest.New(t)
	oa := openaitest.New(t, openaitest.WithScript(
		openaitest.ToolCalls(openaitest.ToolCall{Name: "read", Arguments: `{"path":".env"}`}),
		openaitest.Text("read the file"),
	))
	agentDir, ws := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(ws, ".env"), []byte("DB_HOST=db\nDB_PASSWORD="+dbPassword+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p := startBot(t, procEnv(tg, oa.URL(), agentDir, ws, "DB_PASSWORD="+dbPassword))
	tg.SendText(procUser, procUser, "what is in .env?")
	waitMessage(t, tg, procUser, "read the file")
	chats := oa.ChatRequests()
	if len(chats) != 2 {
		t.Fatalf("model requests = %d, want 2", len(chats))
	}
	result := chats[1].LastMessage()
	if result.Role != "tool" || !strings.Contains(result.Text(), "DB_PASSWORD="+redactor.Token) || !strings.Contains(result.Text(), "DB_HOST=db") {
		t.Errorf("the read tool's result (role %q, %d bytes) does not show DB_PASSWORD=%s beside DB_HOST=db", result.Role, len(result.Text()), redactor.Token)
	}
	for i, b := range oa.AllBodies() {
		if bytes.Contains(b, []byte(dbPassword)) {
			t.Errorf("model request %d holds DB_PASSWORD's value", i)
		}
	}
	for i, b := range tg.AllBodies() {
		if bytes.Contains(b, []byte(dbPassword)) {
			t.Errorf("Telegram request %d holds DB_PASSWORD's value", i)
		}
	}
	if strings.Contains(p.log(), dbPassword) {
		t.Error("the bot's log holds DB_PASSWORD's value")
	}
	if code, _ := p.terminate(); code != 0 {
		t.Errorf("exit %d", code)
	}
}

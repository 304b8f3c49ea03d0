package main

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/mcp"
)

// The status the running bot records of its MCP servers makes the health
// check say "degraded" while one has failed, still exit 0, and plain
// "healthy" once it answered; doctor shows the recorded states.
func TestHealthcheckDegradedByAFailedMCPServer(t *testing.T) {
	dir := t.TempDir()
	now := time.Now()
	if err := os.WriteFile(filepath.Join(dir, HeartbeatFile), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	load := func() (Env, error) { return Env{AgentDir: dir}, nil }
	record := mcpStatusWriter(dir, slog.New(slog.DiscardHandler))
	failed := mcp.ServerStatus{Name: "github", State: mcp.StateFailed, Attempts: 2, RetryAt: now.Add(4 * time.Second),
		Err: errors.New("no answer within 30s: starting npx: context deadline exceeded; stderr: npm error code E503\nnpm error network")}
	record([]mcp.ServerStatus{failed, {Name: "files", State: mcp.StateReady, Tools: 3}})

	var out bytes.Buffer
	if code := healthcheck(&out, load, now, func() int { return 7 }); code != 0 {
		t.Fatalf("healthcheck = %d with a failed MCP server, want 0 (the bot still answers): %s", code, out.String())
	}
	for _, want := range []string{"healthy, degraded: MCP server github failed after 2 tries", "npm error code E503 | npm error network", "tried again in 4s"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("healthcheck output %q lacks %q", out.String(), want)
		}
	}
	if strings.Contains(out.String(), "files") {
		t.Errorf("healthcheck output %q names the server that is ready", out.String())
	}

	var doctorOut bytes.Buffer
	doctorRunningMCP(&report{w: &doctorOut}, dir, now)
	doc := doctorOut.String()
	for _, want := range []string{"in the running bot", "github: failed after 2 tries", "files: ready, 3 tool(s)"} {
		if !strings.Contains(doc, want) {
			t.Errorf("doctor's lines %q lack %q", doc, want)
		}
	}

	record([]mcp.ServerStatus{{Name: "github", State: mcp.StateReady, Tools: 12}})
	out.Reset()
	if code := healthcheck(&out, load, now, func() int { return 7 }); code != 0 || strings.TrimSpace(out.String()) != "healthy" {
		t.Errorf("once the server answered healthcheck = %d, %q; want 0, healthy", code, out.String())
	}
}

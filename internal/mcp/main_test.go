package mcp

import (
	"log/slog"
	"os"
	"testing"

	"github.com/volcanic/telegram-agent/internal/hardening"
)

// fakeServerArg, as the test binary's first argument, makes it run the fake
// MCP server instead of the tests (the re-exec pattern of the SDK's own
// tests).
const fakeServerArg = "mcp-fake-server"

// TestMain runs the fake server or the loader (as another user, see
// TestLoadTrust) when asked to, and otherwise disables host hardening
// before any test builds a policy (the first hardening.Apply wins, so no
// policy a test builds can make the test runner non-dumpable).
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == fakeServerArg {
		os.Exit(runFakeServer(os.Args[2:]))
	}
	if len(os.Args) > 2 && os.Args[1] == loadAsArg {
		os.Exit(runLoad(os.Args[2], os.Stdout))
	}
	hardening.Apply(false, slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

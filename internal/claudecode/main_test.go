package claudecode_test

import (
	"context"
	"log/slog"
	"os"
	"testing"

	"github.com/volcanic/telegram-agent/internal/claudecode"
	"github.com/volcanic/telegram-agent/internal/hardening"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// TestMain dispatches the modes this test binary is started in: the
// sandbox launcher (for the bash tool), the bridge (started by the fake
// claude from --mcp-config) and the fake claude itself. Host hardening is
// turned off before any test builds a spawn policy.
func TestMain(m *testing.M) {
	switch {
	case sandbox.IsLaunch(os.Args):
		os.Exit(sandbox.Launch(os.Args, os.Stderr))
	case len(os.Args) > 1 && os.Args[1] == claudecode.BridgeCommand:
		os.Exit(claudecode.RunBridge(context.Background(), os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	case isFakeClaude(os.Args):
		os.Exit(fakeClaude(os.Args[1:]))
	}
	hardening.Apply(false, slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

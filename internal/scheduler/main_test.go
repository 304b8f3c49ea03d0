package scheduler

import (
	"log/slog"
	"os"
	"testing"

	"github.com/volcanic/telegram-agent/internal/hardening"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// TestMain turns host hardening off before any test builds a spawn
// policy: the first call wins, and a hardened test runner could not be
// debugged.
func TestMain(m *testing.M) {
	// A sandboxed watcher starts this test binary as its launcher.
	if sandbox.IsLaunch(os.Args) {
		os.Exit(sandbox.Launch(os.Args, os.Stderr))
	}
	hardening.Apply(false, slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

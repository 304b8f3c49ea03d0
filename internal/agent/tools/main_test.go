package tools_test

import (
	"log/slog"
	"os"
	"testing"

	"github.com/volcanic/telegram-agent/internal/hardening"
)

// helperEnv names the variable that makes the test binary run a helper
// mode instead of the tests (the re-exec pattern of the memory test).
const helperEnv = "TOOLS_TEST_HELPER"

func TestMain(m *testing.M) {
	hardening.Apply(false, slog.New(slog.DiscardHandler))
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	os.Exit(m.Run())
}

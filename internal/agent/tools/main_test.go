package tools_test

import (
	"fmt"
	"log/slog"
	"os"
	"testing"

	"github.com/volcanic/telegram-agent/internal/hardening"
)

// helperEnv names the variable that makes the test binary run a helper
// mode instead of the tests (the re-exec pattern of the memory and the
// permission tests).
const helperEnv = "TOOLS_TEST_HELPER"

// TestMain disables host hardening before any test builds a policy (the
// first hardening.Apply wins, so no policy can make the test runner
// non-dumpable), then runs the helper mode helperEnv names, or the tests.
func TestMain(m *testing.M) {
	hardening.Apply(false, slog.New(slog.DiscardHandler))
	if mode := os.Getenv(helperEnv); mode != "" {
		os.Exit(runHelper(mode))
	}
	os.Exit(m.Run())
}

// runHelper runs the helper mode the test binary was re-executed in and
// returns its exit code.
func runHelper(mode string) int {
	var err error
	switch mode {
	case helperBigOutput:
		err = printBigOutput(os.Getenv(helperWorkspaceEnv), os.Getenv(helperBytesEnv), os.Stdout)
	case helperPermission:
		err = printPermissionOutcomes(os.Getenv(helperTargetEnv), os.Stdout)
	default:
		fmt.Fprintf(os.Stderr, "unknown helper mode %q\n", mode)
		return 2
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

package spawnpolicy

import (
	"log/slog"
	"os"
	"testing"

	"github.com/volcanic/telegram-agent/internal/hardening"
)

// TestMain disables host hardening before any test builds a policy: the
// first hardening.Apply wins, so no policy a test builds can make the test
// runner non-dumpable.
func TestMain(m *testing.M) {
	hardening.Apply(false, slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

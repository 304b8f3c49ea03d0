package approvals

import (
	"log/slog"
	"os"
	"testing"

	"github.com/volcanic/telegram-agent/internal/hardening"
)

// TestMain turns host hardening off before any test builds a spawn
// policy: the first call wins, and a hardened test runner could not be
// debugged.
func TestMain(m *testing.M) {
	hardening.Apply(false, slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

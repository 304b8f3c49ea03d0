package hardening

import (
	"log/slog"
	"os"
	"testing"

	"github.com/volcanic/telegram-agent/internal/logtest"
)

// TestMain first lets the test binary act as a helper process when the
// integration tests re-run it in a helper mode. Otherwise it calls
// Apply(false, …) before any test, so that nothing in this package can make
// the test runner non-dumpable.
func TestMain(m *testing.M) {
	if code, ok := runHelperMode(); ok {
		os.Exit(code)
	}
	Apply(false, slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

func TestApplyAfterTestMainDoesNothing(t *testing.T) {
	rec := logtest.New()
	Apply(true, slog.New(rec))
	if got := logged(rec); len(got) != 0 {
		t.Errorf("Apply after TestMain's Apply(false) logged %v, want nothing (the first call wins)", got)
	}
}

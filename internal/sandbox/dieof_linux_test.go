package sandbox

import (
	"os"
	"os/signal"
	"testing"

	"golang.org/x/sys/unix"
)

// TestIgnored reads the kernel's disposition: a signal is ignored once
// the process ignores it, and not once it is handled again. dieOf takes the
// short wait for an ignored SIGHUP, which it cannot die of.
func TestIgnored(t *testing.T) {
	if ignored(unix.SIGUSR2) {
		t.Fatal("SIGUSR2 is ignored before the test ignores it")
	}
	signal.Ignore(unix.SIGUSR2)
	defer signal.Reset(unix.SIGUSR2)
	if !ignored(unix.SIGUSR2) {
		t.Error("SIGUSR2 is not reported ignored after signal.Ignore")
	}
	// Notify takes an ignored signal back from SIG_IGN.
	signal.Notify(make(chan os.Signal, 1), unix.SIGUSR2)
	if ignored(unix.SIGUSR2) {
		t.Error("SIGUSR2 is reported ignored after signal.Notify")
	}
}

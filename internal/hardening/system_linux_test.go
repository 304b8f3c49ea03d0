package hardening

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestLinuxConstants(t *testing.T) {
	tests := []struct {
		name      string
		got, want int
	}{
		{"PR_GET_DUMPABLE", prGetDumpable, unix.PR_GET_DUMPABLE},
		{"PR_SET_DUMPABLE", prSetDumpable, unix.PR_SET_DUMPABLE},
		{"RLIMIT_CORE", rlimitCore, unix.RLIMIT_CORE},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("%s = %d, want %d", tt.name, tt.got, tt.want)
			}
		})
	}
}

// TestDumpableTestRunner checks Dumpable against the real kernel: TestMain's
// Apply(false, …) leaves the test runner dumpable.
func TestDumpableTestRunner(t *testing.T) {
	got, err := Dumpable()
	if err != nil {
		t.Fatalf("Dumpable() error = %v", err)
	}
	if !got {
		t.Error("Dumpable() = false, want true: the test runner must never be hardened")
	}
}

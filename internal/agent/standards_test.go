package agent

import (
	"strings"
	"testing"
)

// TestSentinelErrorsArePrefixed checks that every exported sentinel error
// says it comes from the agent, as the package's other errors do.
func TestSentinelErrorsArePrefixed(t *testing.T) {
	tests := []struct {
		name string
		err  error
	}{
		{"ErrContextTooLong", ErrContextTooLong},
		{"ErrSessionClosed", ErrSessionClosed},
		{"ErrAgentClosed", ErrAgentClosed},
		{"ErrInsideTurn", ErrInsideTurn},
		{"ErrNothingToCompact", ErrNothingToCompact},
		{"ErrSpawnRefused", ErrSpawnRefused},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if msg := tt.err.Error(); !strings.HasPrefix(msg, "agent: ") {
				t.Errorf("%s says %q, want the prefix \"agent: \"", tt.name, msg)
			}
		})
	}
}

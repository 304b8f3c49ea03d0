package spawnpolicy

import "testing"

func TestPurposeString(t *testing.T) {
	tests := []struct {
		purpose Purpose
		want    string
	}{
		{BashTool, "BashTool"},
		{ScheduledScript, "ScheduledScript"},
		{MCPServer, "MCPServer"},
		{ExtensionExec, "ExtensionExec"},
		{Other, "Other"},
		{Purpose(42), "Purpose(42)"},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := tt.purpose.String(); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

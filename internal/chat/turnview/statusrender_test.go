package turnview

import (
	"strconv"
	"testing"
)

// TestRenderLastMode checks the last mode's forms: the latest call after a
// count while the turn runs; one line once every call ended well; call by
// call when one failed.
func TestRenderLastMode(t *testing.T) {
	calls := func(states ...toolState) []*toolLine {
		var out []*toolLine
		for i, st := range states {
			out = append(out, &toolLine{id: strconv.Itoa(i), name: "bash", arg: "step " + strconv.Itoa(i), state: st})
		}
		return out
	}
	tests := []struct {
		name  string
		calls []*toolLine
		final bool
		want  string
	}{
		{"running, first call", calls(toolRunning), false, "⏳ bash: step 0"},
		{"running, third call", calls(toolDone, toolDone, toolRunning), false, "(2 tool calls before)\n⏳ bash: step 2"},
		{"ended well", calls(toolDone, toolDone), true, "✅ 2 tool calls: bash ×2"},
		{"one failed", calls(toolDone, toolFailed), true, "✅ bash: step 0\n❌ bash: step 1"},
		{"cut by a stop", calls(toolDone, toolRunning), true, "✅ bash: step 0\n⏹ bash: step 1 (stopped)"},
	}
	for _, tt := range tests {
		s := &toolStatus{mode: ToolStatusLast, calls: tt.calls}
		if got := s.render(tt.final); got != tt.want {
			t.Errorf("%s: render = %q, want %q", tt.name, got, tt.want)
		}
	}
}

package spawnpolicy

import (
	"log/slog"
	"testing"
)

// countNotices is a record of notices, its lines set by the test.
type countNotices struct{ lines []string }

func (n *countNotices) Mark() uint64 { return uint64(len(n.lines)) }
func (n *countNotices) Since(mark uint64) []string {
	return n.lines[min(mark, uint64(len(n.lines))):]
}

// TestPrepareCarriesNotices checks that every prepared context reports
// through the options' Notices, even when a hook returns a context built
// from scratch, and that a policy without them prepares contexts without.
func TestPrepareCarriesNotices(t *testing.T) {
	dir := t.TempDir()
	fresh := func(c Context) (Context, error) {
		return Context{Command: c.Command, Cwd: c.Cwd, Env: map[string]string{"FROM_HOOK": "1"}}, nil
	}
	record := &countNotices{}
	tests := []struct {
		name    string
		notices Notices
		hooks   []Hook
	}{
		{name: "notices", notices: record},
		{name: "notices, a hook returns a new context", notices: record, hooks: []Hook{fresh}},
		{name: "none"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			opts := DefaultOptions()
			opts.HardenHostProcess = false
			opts.Notices = tt.notices
			opts.Hooks = tt.hooks
			p, err := New(opts, slog.New(slog.DiscardHandler), func() map[string]string { return map[string]string{"PATH": "/usr/bin"} })
			if err != nil {
				t.Fatal(err)
			}
			pc, err := p.Prepare(Request{Purpose: BashTool, Command: "true", Cwd: dir})
			if err != nil {
				t.Fatal(err)
			}
			if pc.Notices != tt.notices {
				t.Fatalf("the prepared context's Notices = %v, want %v", pc.Notices, tt.notices)
			}
		})
	}
}

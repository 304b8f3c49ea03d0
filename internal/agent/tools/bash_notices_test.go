package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
)

// fileNotices is a record of notices kept in a file, one line each, so
// that a command can add one while it runs, as a client refusing the
// credential proxy's certificate does.
type fileNotices string

func (f fileNotices) lines() []string {
	b, _ := os.ReadFile(string(f))
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")[:strings.Count(string(b), "\n")]
}

func (f fileNotices) Mark() uint64 { return uint64(len(f.lines())) }

func (f fileNotices) Since(mark uint64) []string {
	l := f.lines()
	return l[min(mark, uint64(len(l))):]
}

// TestBashNotices checks that the bash tool's result ends with the lines
// noticed while the command ran, after its output and exit code, and
// lists them in Details; a line noticed before it started is not added.
func TestBashNotices(t *testing.T) {
	record := fileNotices(filepath.Join(t.TempDir(), "notices"))
	if err := os.WriteFile(string(record), []byte("[an earlier notice]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, fixtureConfig{notices: record})
	tests := []struct {
		name, command string
		want          []string
	}{
		{"a notice while it ran", `echo output; echo "[a client refused the proxy's certificate for api.github.com]" >> ` + string(record), []string{"[a client refused the proxy's certificate for api.github.com]"}},
		{"none", `echo output`, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.call(context.Background(), t, tools.NewBash(), bashArgs(tt.command, 0), nil)
			text := agent.TextOf(res.Content)
			want := "output\n\n[Exit code: 0]"
			for _, l := range tt.want {
				want += "\n" + l
			}
			if diff := cmp.Diff(want, text); diff != "" {
				t.Errorf("result text (-want +got):\n%s", diff)
			}
			got, _ := res.Details["notices"].([]string)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Details[notices] (-want +got):\n%s", diff)
			}
		})
	}
}

package tools_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// TestBashSpillCap checks that a full output past the spill limit is saved
// only up to it, that the result says so, and that the tail is still the
// output's end.
func TestBashSpillCap(t *testing.T) {
	tests := []struct {
		name     string
		limit    int64
		wantNote string
		wantFull int
	}{
		{name: "under the cap", limit: 1 << 20, wantNote: "Full output: ", wantFull: 292},
		{name: "over the cap", limit: 100, wantNote: "Full output, cut at 100 B: ", wantFull: 100},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fixtureConfig{})
			bash := tools.NewBash(tools.WithTailLimits(10, 1000), tools.WithSpillLimits(tt.limit, 0, 0))
			res := f.call(t.Context(), t, bash, bashArgs("seq 1 100", 10), nil)
			text := agent.TextOf(res.Content)
			path, _ := res.Details["full_output_path"].(string)
			if !strings.HasPrefix(text, "91\n") || !strings.Contains(text, tt.wantNote+path+"]") {
				t.Errorf("text %q, want the tail and %q", text, tt.wantNote+path+"]")
			}
			full, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("reading the full output: %v", err)
			}
			var want strings.Builder
			for i := 1; i <= 100; i++ {
				fmt.Fprintf(&want, "%d\n", i)
			}
			if diff := cmp.Diff(want.String()[:tt.wantFull], string(full)); diff != "" {
				t.Errorf("saved output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBashSpillCleanup checks that saving a full output first removes the
// saved outputs older than the maximum age, then the oldest beyond the
// maximum number, and leaves other files alone.
func TestBashSpillCleanup(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	dir := filepath.Join(f.workspace, ".tmp")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	write := func(name string, age time.Duration) {
		t.Helper()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, []byte("old output\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(path, now.Add(-age), now.Add(-age)); err != nil {
			t.Fatal(err)
		}
	}
	write("bash-stale1.log", 48*time.Hour)
	write("bash-stale2.log", 25*time.Hour)
	write("notes.txt", 100*time.Hour)
	var want []string
	for i := range 6 {
		name := fmt.Sprintf("bash-recent%d.log", i)
		// recent0 is the oldest of them.
		write(name, time.Duration(6-i)*time.Minute)
		if i >= 2 {
			want = append(want, name)
		}
	}
	bash := tools.NewBash(tools.WithTailLimits(10, 1000), tools.WithSpillLimits(0, 24*time.Hour, 5))
	res := f.call(t.Context(), t, bash, bashArgs("seq 1 100", 10), nil)
	path, _ := res.Details["full_output_path"].(string)
	if path == "" {
		t.Fatal("no full output was saved")
	}
	want = append(want, filepath.Base(path), "notes.txt")
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range entries {
		got = append(got, e.Name())
	}
	slices.Sort(want)
	slices.Sort(got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("files in .tmp (-want +got):\n%s", diff)
	}
}

// TestBashSpillThroughView checks that with the sandbox's view the full
// output is saved beneath the workspace as the agent's own writes are: a
// .tmp the agent made a link to a place outside the view is not followed
// by the bot, which writes the file as itself; the result says the output
// was not saved.
func TestBashSpillThroughView(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the sandbox's view opens files with openat2, which only Linux has")
	}
	f := newFixture(t, fixtureConfig{})
	outside := t.TempDir()
	view := &sandbox.View{Workspace: f.workspace, Temp: t.TempDir()}
	bash := tools.NewBash(tools.WithTailLimits(10, 1000), tools.WithView(view))

	res := f.call(t.Context(), t, bash, bashArgs("seq 1 100", 10), nil)
	path, _ := res.Details["full_output_path"].(string)
	if full, err := os.ReadFile(path); err != nil || !strings.HasPrefix(string(full), "1\n2\n") {
		t.Fatalf("the full output was not saved in the workspace (%v)", err)
	}

	if err := os.RemoveAll(filepath.Join(f.workspace, ".tmp")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(f.workspace, ".tmp")); err != nil {
		t.Fatal(err)
	}
	res = f.call(t.Context(), t, bash, bashArgs("seq 1 100", 10), nil)
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("the full output was saved through the link, outside the view: %d file(s)", len(entries))
	}
	if text := agent.TextOf(res.Content); !strings.HasPrefix(text, "91\n") || !strings.Contains(text, "saving the full output") {
		t.Errorf("the result %q does not keep the tail and say the full output was not saved", text)
	}
}

package tools_test

import (
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
)

func TestEdit(t *testing.T) {
	const original = "alpha\nbeta\ngamma beta\nbeta\n"
	tests := []struct {
		name     string
		path     string
		old, new string
		want     func(p string) agent.Result
		wantFile string
	}{
		{
			name: "exactly one occurrence", path: "f.txt", old: "gamma beta", new: "delta", wantFile: "alpha\nbeta\ndelta\nbeta\n",
			want: func(p string) agent.Result {
				return agent.Result{Content: []agent.Content{agent.Text("Replaced 1 occurrence in " + p + " (line 3)")}, Details: map[string]any{"path": p, "line": 3}}
			},
		},
		{
			name: "multi-line old_text", path: "f.txt", old: "alpha\nbeta\n", new: "", wantFile: "gamma beta\nbeta\n",
			want: func(p string) agent.Result {
				return agent.Result{Content: []agent.Content{agent.Text("Replaced 1 occurrence in " + p + " (line 1)")}, Details: map[string]any{"path": p, "line": 1}}
			},
		},
		{
			name: "no occurrence", path: "f.txt", old: "omega", new: "x", wantFile: original,
			want: func(p string) agent.Result {
				return agent.ErrorResult("old_text was not found in " + p + "; it must match the file exactly, whitespace included")
			},
		},
		{
			name: "several occurrences", path: "f.txt", old: "beta", new: "x", wantFile: original,
			want: func(p string) agent.Result {
				return agent.ErrorResult("old_text occurs 3 times in " + p + "; it must occur exactly once, so include more surrounding text")
			},
		},
		{
			name: "identical texts", path: "f.txt", old: "alpha", new: "alpha", wantFile: original,
			want: func(string) agent.Result {
				return agent.ErrorResult("old_text and new_text are identical; nothing to change")
			},
		},
		{
			name: "empty old_text", path: "f.txt", old: "", new: "x", wantFile: original,
			want: func(string) agent.Result { return agent.ErrorResult("old_text must not be empty") },
		},
		{
			name: "missing file", path: "missing.txt", old: "a", new: "b",
			want: func(p string) agent.Result { return agent.ErrorResult("File not found: " + p) },
		},
		{
			name: "a folder", path: "dir", old: "a", new: "b",
			want: func(p string) agent.Result { return agent.ErrorResult(p + " is a directory, not a file") },
		},
		{
			name: "a binary file", path: "bin", old: "a", new: "b",
			want: func(p string) agent.Result {
				return agent.ErrorResult(p + " looks like a binary file; edit only changes text files")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fixtureConfig{})
			writeFile(t, filepath.Join(f.workspace, "f.txt"), original, 0o640)
			writeFile(t, filepath.Join(f.workspace, "bin"), "a\x00b", 0o644)
			mkdir(t, filepath.Join(f.workspace, "dir"))
			got := f.call(t.Context(), t, tools.NewEdit(), jsonArgs(map[string]any{"path": tt.path, "old_text": tt.old, "new_text": tt.new}), nil)
			p := filepath.Join(f.workspace, tt.path)
			if diff := cmp.Diff(tt.want(p), got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if tt.wantFile != "" {
				checkFile(t, p, tt.wantFile, 0o640)
			}
		})
	}
}

// TestAll checks the four tools' names and order.
func TestAll(t *testing.T) {
	var names []string
	for _, tool := range tools.All() {
		names = append(names, tool.Spec().Name)
	}
	if diff := cmp.Diff([]string{"bash", "read", "write", "edit"}, names); diff != "" {
		t.Errorf("names (-want +got):\n%s", diff)
	}
	// The agent accepts their schemas.
	newFixture(t, fixtureConfig{tools: tools.All()})
}

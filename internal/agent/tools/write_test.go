package tools_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
)

func TestWrite(t *testing.T) {
	tests := []struct {
		name string
		// setup prepares the workspace.
		setup    func(t *testing.T, ws string)
		path     string
		content  string
		want     func(ws string) agent.Result
		wantFile string
		wantMode fs.FileMode
	}{
		{
			name: "new file in new folders", path: "a/b/new.txt", content: "hello", wantFile: "hello", wantMode: 0o644,
			want: func(ws string) agent.Result {
				return agent.Result{Content: []agent.Content{agent.Text("Wrote 5 bytes to " + filepath.Join(ws, "a/b/new.txt"))}, Details: map[string]any{"path": filepath.Join(ws, "a/b/new.txt"), "bytes": 5}}
			},
		},
		{
			name: "replaces a file and keeps its mode", path: "run.sh", content: "#!/bin/sh\necho new\n", wantFile: "#!/bin/sh\necho new\n", wantMode: 0o750,
			setup: func(t *testing.T, ws string) {
				writeFile(t, filepath.Join(ws, "run.sh"), "#!/bin/sh\necho old\n", 0o750)
			},
			want: func(ws string) agent.Result {
				return agent.Result{Content: []agent.Content{agent.Text("Wrote 19 bytes to " + filepath.Join(ws, "run.sh"))}, Details: map[string]any{"path": filepath.Join(ws, "run.sh"), "bytes": 19}}
			},
		},
		{
			name: "an empty file", path: "empty", content: "", wantFile: "", wantMode: 0o644,
			want: func(ws string) agent.Result {
				return agent.Result{Content: []agent.Content{agent.Text("Wrote 0 bytes to " + filepath.Join(ws, "empty"))}, Details: map[string]any{"path": filepath.Join(ws, "empty"), "bytes": 0}}
			},
		},
		{
			name: "a folder", path: "dir",
			setup: func(t *testing.T, ws string) { mkdir(t, filepath.Join(ws, "dir")) },
			want: func(ws string) agent.Result {
				p := filepath.Join(ws, "dir")
				return agent.ErrorResult("Cannot write " + p + ": " + p + " is a directory, not a file")
			},
		},
		{
			name: "a file in the way of a folder", path: "file/x.txt",
			setup: func(t *testing.T, ws string) { writeFile(t, filepath.Join(ws, "file"), "x", 0o644) },
			want: func(ws string) agent.Result {
				return agent.ErrorResult("Cannot create the folder of " + filepath.Join(ws, "file/x.txt") + ": A parent of " + filepath.Join(ws, "file") + " is not a directory")
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fixtureConfig{})
			if tt.setup != nil {
				tt.setup(t, f.workspace)
			}
			got := f.call(t.Context(), t, tools.NewWrite(), jsonArgs(map[string]any{"path": tt.path, "content": tt.content}), nil)
			if diff := cmp.Diff(tt.want(f.workspace), got); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if got.IsError {
				return
			}
			checkFile(t, filepath.Join(f.workspace, tt.path), tt.wantFile, tt.wantMode)
			entries, _ := os.ReadDir(filepath.Dir(filepath.Join(f.workspace, tt.path)))
			if len(entries) != 1 {
				t.Errorf("the folder holds %d entries, want only the file (no temporary file left)", len(entries))
			}
		})
	}
}

// TestWriteThroughSymlink checks that writing a symbolic link replaces its
// target and keeps the link.
func TestWriteThroughSymlink(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	target := filepath.Join(f.workspace, "target.txt")
	writeFile(t, target, "old", 0o600)
	link := filepath.Join(f.workspace, "link.txt")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	if got := f.call(t.Context(), t, tools.NewWrite(), jsonArgs(map[string]any{"path": "link.txt", "content": "new"}), nil); got.IsError {
		t.Fatalf("write: %q", agent.TextOf(got.Content))
	}
	checkFile(t, target, "new", 0o600)
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi, err)
	}
}

// writeFile writes a test file or fails the test.
func writeFile(t *testing.T, path, content string, mode fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, mode); err != nil {
		t.Fatal(err)
	}
}

// mkdir makes a test folder or fails the test.
func mkdir(t *testing.T, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// checkFile checks a file's content and permission bits.
func checkFile(t *testing.T, path, want string, mode fs.FileMode) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	if diff := cmp.Diff(want, string(data)); diff != "" {
		t.Errorf("content (-want +got):\n%s", diff)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != mode {
		t.Errorf("mode %v (%v), want %v", fi.Mode().Perm(), err, mode)
	}
}

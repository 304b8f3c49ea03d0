package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
)

// The permission helper mode and its parameters.
const (
	// helperPermission runs the file tools against a folder the helper's
	// user may neither change nor fully read (see TestPermissionDenied).
	helperPermission = "permission-denied"
	// helperTargetEnv names that folder.
	helperTargetEnv = "TOOLS_TEST_TARGET"
)

// The files of the permission test's folder and their content.
const (
	// lockedFile is unreadable for the tools' user: 0600 and root's when
	// the tests run as root, 0000 otherwise.
	lockedFile    = "locked.txt"
	lockedContent = "locked\n"
	// openFile is readable by everyone, in a folder the tools' user may
	// not write to.
	openFile    = "open.txt"
	openContent = "open\n"
)

// permissionCase is one call of a file tool on a path its user may not use,
// and the result it must give.
type permissionCase struct {
	name string
	tool agent.Tool
	args map[string]any
	want agent.Result
}

// permissionCases returns the calls the test makes in dir, a folder built
// by newPermissionTarget.
func permissionCases(dir string) []permissionCase {
	locked, open := filepath.Join(dir, lockedFile), filepath.Join(dir, openFile)
	newFile, subFile := filepath.Join(dir, "new.txt"), filepath.Join(dir, "sub", "new.txt")
	return []permissionCase{
		{
			name: "read an unreadable file",
			tool: tools.NewRead(), args: map[string]any{"path": locked},
			want: agent.ErrorResult("Permission denied: " + locked),
		},
		{
			name: "edit an unreadable file",
			tool: tools.NewEdit(), args: map[string]any{"path": locked, "old_text": "locked", "new_text": "opened"},
			want: agent.ErrorResult("Permission denied: " + locked),
		},
		{
			name: "edit a file in a read-only folder",
			tool: tools.NewEdit(), args: map[string]any{"path": open, "old_text": "open", "new_text": "shut"},
			want: agent.ErrorResult("Cannot write " + open + ": Permission denied: " + open),
		},
		{
			name: "write over a file in a read-only folder",
			tool: tools.NewWrite(), args: map[string]any{"path": locked, "content": "replaced\n"},
			want: agent.ErrorResult("Cannot write " + locked + ": Permission denied: " + locked),
		},
		{
			name: "write a new file in a read-only folder",
			tool: tools.NewWrite(), args: map[string]any{"path": newFile, "content": "new\n"},
			want: agent.ErrorResult("Cannot write " + newFile + ": Permission denied: " + newFile),
		},
		{
			name: "write below a read-only folder",
			tool: tools.NewWrite(), args: map[string]any{"path": subFile, "content": "new\n"},
			want: agent.ErrorResult("Cannot create the folder of " + subFile + ": Permission denied: " + filepath.Dir(subFile)),
		},
	}
}

// permissionOutcome is one call's result, as the helper prints it.
type permissionOutcome struct {
	Name   string       `json:"name"`
	Result agent.Result `json:"result"`
}

// runPermissionCases runs every call of permissionCases in dir as the
// current user.
func runPermissionCases(tb testing.TB, dir string) []permissionOutcome {
	f := newFixture(tb, fixtureConfig{})
	var out []permissionOutcome
	for _, c := range permissionCases(dir) {
		out = append(out, permissionOutcome{Name: c.name, Result: f.call(context.Background(), tb, c.tool, jsonArgs(c.args), nil)})
	}
	return out
}

// printPermissionOutcomes is the permission helper: it runs the calls in dir
// and prints their results to w as JSON.
func printPermissionOutcomes(dir string, w io.Writer) error {
	if dir == "" {
		return fmt.Errorf("%s is not set", helperTargetEnv)
	}
	return json.NewEncoder(w).Encode(runPermissionCases(helperTB{}, dir))
}

// TestPermissionDenied checks that read, write and edit answer a
// permission error with a clear error result. The permission bits must
// apply to the tools' user, so as root (as in CI) the calls run, for real,
// in the test binary re-executed as the unprivileged user 65534 against
// root's files; otherwise they run in the test process against files it
// locked itself.
func TestPermissionDenied(t *testing.T) {
	var dir string
	var got []permissionOutcome
	if os.Geteuid() == 0 {
		base := publicTempDir(t)
		dir = newPermissionTarget(t, base, 0o600, 0o755)
		got = runPermissionHelperAsOther(t, base, dir)
	} else {
		dir = newPermissionTarget(t, t.TempDir(), 0o000, 0o555)
		got = runPermissionCases(t, dir)
	}
	results := map[string]agent.Result{}
	for _, o := range got {
		results[o.Name] = o.Result
	}
	for _, c := range permissionCases(dir) {
		t.Run(c.name, func(t *testing.T) {
			res, ok := results[c.name]
			if !ok {
				t.Fatalf("no result for the call among %d", len(got))
			}
			if diff := cmp.Diff(c.want, res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
		})
	}
	t.Run("nothing changed", func(t *testing.T) {
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if diff := cmp.Diff([]string{lockedFile, openFile}, names); diff != "" {
			t.Errorf("the folder's entries (-want +got):\n%s", diff)
		}
		if err := os.Chmod(filepath.Join(dir, lockedFile), 0o600); err != nil {
			t.Fatal(err)
		}
		for name, want := range map[string]string{lockedFile: lockedContent, openFile: openContent} {
			if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || string(b) != want {
				t.Errorf("%s holds %q (err %v), want %q", name, b, err, want)
			}
		}
	})
}

// newPermissionTarget creates the folder "target" in parent with lockedFile
// (lockedMode) and openFile (0644), then gives the folder dirMode. A cleanup
// makes it writable again so the test's clean-up can remove it.
func newPermissionTarget(t *testing.T, parent string, lockedMode, dirMode os.FileMode) string {
	t.Helper()
	dir := filepath.Join(parent, "target")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	files := []struct {
		name, content string
		mode          os.FileMode
	}{
		{name: lockedFile, content: lockedContent, mode: lockedMode},
		{name: openFile, content: openContent, mode: 0o644},
	}
	for _, f := range files {
		path := filepath.Join(dir, f.name)
		if err := os.WriteFile(path, []byte(f.content), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(dir, dirMode); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(dir, 0o755) })
	return dir
}

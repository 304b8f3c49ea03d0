package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// TestGiveTree gives a workspace to the agent's ids as root does at start:
// files and directories change owner, the group's permissions become the
// owner's, directories setgid; a symbolic link out of the tree, and what
// it points to, keep theirs, and so does a file with a second link.
func TestGiveTree(t *testing.T) {
	needRoot(t)
	root, outside := t.TempDir(), t.TempDir()
	secret := filepath.Join(outside, "shadow")
	write := func(path string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(path, []byte("x"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	write(secret, 0o600)
	if err := os.MkdirAll(filepath.Join(root, "src", "deep"), 0o700); err != nil {
		t.Fatal(err)
	}
	write(filepath.Join(root, "src", "main.go"), 0o644)
	write(filepath.Join(root, "src", "deep", "run.sh"), 0o700)
	if err := os.Symlink(secret, filepath.Join(root, "src", "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "dirlink")); err != nil {
		t.Fatal(err)
	}
	if err := os.Link(secret, filepath.Join(root, "hard")); err != nil {
		t.Fatal(err)
	}
	ids := sandbox.IDs{UID: 64123, GID: 64124}
	if err := giveTree(root, ids.UID, ids); err != nil {
		t.Fatal(err)
	}
	type file struct {
		UID, GID uint32
		Mode     string
	}
	look := func(path string) file {
		t.Helper()
		info, err := os.Lstat(path)
		if err != nil {
			t.Fatal(err)
		}
		st := info.Sys().(*syscall.Stat_t)
		return file{st.Uid, st.Gid, info.Mode().String()}
	}
	got := map[string]file{}
	for _, p := range []string{"", "src", "src/deep", "src/main.go", "src/deep/run.sh", "src/link", "dirlink", "hard"} {
		got[p] = look(filepath.Join(root, p))
	}
	got["outside"], got["outside/shadow"] = look(outside), look(secret)
	want := map[string]file{
		"":                {64123, 64124, "dgrwxrwxr-x"},
		"src":             {64123, 64124, "dgrwxrwx---"},
		"src/deep":        {64123, 64124, "dgrwxrwx---"},
		"src/main.go":     {64123, 64124, "-rw-rw-r--"},
		"src/deep/run.sh": {64123, 64124, "-rwxrwx---"},
		"src/link":        {64123, 64124, "Lrwxrwxrwx"},
		"dirlink":         {64123, 64124, "Lrwxrwxrwx"},
		"hard":            {0, 0, "-rw-------"},
		"outside":         {0, 0, "drwxr-xr-x"},
		"outside/shadow":  {0, 0, "-rw-------"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("owners and modes (-want +got):\n%s", diff)
	}
}

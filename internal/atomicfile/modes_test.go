package atomicfile

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestRestoreModes takes away what an agent process of the bot's user can
// take away (chmod 0 of the tree's root, of a directory, of a file, the
// write bit alone) and checks that the owner bits come back and nothing
// else changes: modes that already grant them, group and other bits, a
// skipped directory, a symbolic link's target, and (as root) another
// user's file.
func TestRestoreModes(t *testing.T) {
	root := filepath.Join(t.TempDir(), "data")
	paths := map[string]fs.FileMode{
		"":                    0,
		"sessions":            0o050,
		"sessions/chat.jsonl": 0,
		"jobs.json":           0o444,
		"settings.json":       0o640,
		"workspace":           0,
		"workspace/script":    0,
		"outside":             0,
	}
	want := map[string]fs.FileMode{
		"":                    0o700,
		"sessions":            0o750,
		"sessions/chat.jsonl": 0o600,
		"jobs.json":           0o644,
		"settings.json":       0o640,
		"workspace":           0,
		"workspace/script":    0,
		"outside":             0,
	}
	mk := func(rel string) string { return filepath.Join(root, rel) }
	for _, dir := range []string{"", "sessions", "workspace"} {
		if err := os.MkdirAll(mk(dir), 0o700); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"sessions/chat.jsonl", "jobs.json", "settings.json", "workspace/script"} {
		if err := os.WriteFile(mk(f), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	outside := filepath.Join(filepath.Dir(root), "outside")
	if err := os.WriteFile(outside, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, mk("outside")); err != nil {
		t.Fatal(err)
	}
	if os.Geteuid() == 0 {
		if err := os.WriteFile(mk("theirs"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(mk("theirs"), 65534, 65534); err != nil {
			t.Fatal(err)
		}
		paths["theirs"], want["theirs"] = 0, 0
	}
	// Deepest first: a directory's own mode 0 would keep the test from
	// its entries.
	rels := slices.Sorted(func(yield func(string) bool) {
		for rel := range paths {
			if !yield(rel) {
				return
			}
		}
	})
	slices.Reverse(rels)
	modeOf := func(rel string) fs.FileMode {
		p := mk(rel)
		if rel == "outside" {
			p = outside
		}
		info, err := os.Lstat(p)
		if err != nil {
			t.Fatal(err)
		}
		return info.Mode().Perm()
	}
	for _, rel := range rels {
		p := mk(rel)
		if rel == "outside" {
			p = outside
		}
		if err := os.Chmod(p, paths[rel]); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = os.Chmod(mk(""), 0o700); _ = os.Chmod(mk("workspace"), 0o700) })

	changed, err := RestoreModes(root, mk("workspace"))
	if err != nil {
		t.Fatalf("RestoreModes: %v", err)
	}
	got := map[string]fs.FileMode{}
	for _, rel := range rels {
		got[rel] = modeOf(rel)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("modes (-want +got):\n%s", diff)
	}
	wantChanged := []string{root, mk("jobs.json"), mk("sessions"), mk("sessions/chat.jsonl")}
	slices.Sort(changed)
	if diff := cmp.Diff(wantChanged, changed); diff != "" {
		t.Errorf("changed (-want +got):\n%s", diff)
	}

	again, err := RestoreModes(root, mk("workspace"))
	if err != nil || len(again) != 0 {
		t.Errorf("a second RestoreModes changed %v (err %v), want nothing", again, err)
	}
}

// TestRestoreModesMissing: a state tree not made yet is nothing to
// restore.
func TestRestoreModesMissing(t *testing.T) {
	changed, err := RestoreModes(filepath.Join(t.TempDir(), "none"))
	if err != nil || len(changed) != 0 {
		t.Errorf("RestoreModes of a missing dir = %v, %v; want nothing", changed, err)
	}
}

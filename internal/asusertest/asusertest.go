// Package asusertest runs a test's child processes as an unprivileged user
// when the tests run as root, as they do in CI.
//
// A test that needs the kernel's permission checks to apply to a child (a
// file the child must not read, a process it must not inspect) cannot rely
// on root's child: root passes them all. The package gives such a test the
// three pieces it needs:
//
//   - [PublicDir] and [PublicCopy]: a world-readable directory, and a copy
//     of an executable in one, that UID can reach (t.TempDir's parents are
//     private to root, and so is the build cache holding the test binary);
//   - [Drop]: a command that starts as UID:GID;
//   - [Start], [Run] and [CombinedOutput]: starting it without leaving the
//     test runner non-dumpable. Go starts a child with a vfork-style clone
//     that shares the parent's memory descriptor until execve, so the
//     child's setuid clears the dumpable flag of the test process too;
//     these put it back right after the start, and a cleanup checks that
//     the runner is dumpable when the test ends.
//
// It imports no project package, so every package's tests may use it.
package asusertest

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// UID and GID are the unprivileged user and group (nobody and nogroup)
// children run as when the tests run as root. They need no passwd entry.
const (
	UID = 65534
	GID = 65534
)

// Needed reports whether the test runs as root, so that a child must drop
// to UID and GID (with [Drop]) to be unprivileged.
func Needed() bool {
	return os.Geteuid() == 0
}

// PublicDir creates a fresh directory, mode 0755, in the system's temporary
// directory (not under t.TempDir, whose parents are private to root), and
// removes it with its contents when the test ends. A removal that fails
// (a child may leave a directory its owner cannot write) is logged, not an
// error of the test.
func PublicDir(t testing.TB) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "asusertest-")
	if err != nil {
		t.Fatalf("asusertest: make a public directory: %v", err)
	}
	t.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			t.Logf("asusertest: remove %s: %v", dir, err)
		}
	})
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatalf("asusertest: chmod %s: %v", dir, err)
	}
	return dir
}

// PublicCopy copies the file src, with the same base name and the
// permission bits mode, into a new [PublicDir] and returns the copy's path.
// The copy's directory (filepath.Dir of the result) is the test's to fill
// further.
func PublicCopy(t testing.TB, src string, mode os.FileMode) string {
	t.Helper()
	dst := filepath.Join(PublicDir(t), filepath.Base(src))
	if err := copyFile(src, dst, mode); err != nil {
		t.Fatalf("asusertest: %v", err)
	}
	return dst
}

// copyFile copies src to the new file dst and sets dst's permission bits
// to mode, whatever the umask.
func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("copy %s: %w", src, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	if err := os.Chmod(dst, mode); err != nil {
		return fmt.Errorf("copy %s to %s: %w", src, dst, err)
	}
	return nil
}

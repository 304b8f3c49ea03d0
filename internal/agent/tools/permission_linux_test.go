package tools_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/volcanic/telegram-agent/internal/hardening"
)

// otherUID and otherGID are the unprivileged user the permission helper
// runs as when the tests run as root (nobody and nogroup).
const (
	otherUID = 65534
	otherGID = 65534
)

// publicTempDir creates a root-owned 0755 folder in the system's temporary
// folder (t.TempDir's parent is 0700, closed to another user), removed when
// the test ends.
func publicTempDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "tools-permission-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// runPermissionHelperAsOther copies the test binary into base and runs it
// as otherUID:otherGID in the permission helper mode on dir, with its own
// temporary folder in base, and returns the results it printed. Starting a
// child with other credentials clears this process's dumpable flag (the
// vfork-style clone shares its memory map), so it restores the flag once
// the child has started and a cleanup checks that it stayed set.
func runPermissionHelperAsOther(t *testing.T, base, dir string) []permissionOutcome {
	t.Helper()
	exe := filepath.Join(base, "tools.test")
	if err := copyTestBinary(exe); err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(base, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(tmp, otherUID, otherGID); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe)
	cmd.Env = []string{
		helperEnv + "=" + helperPermission,
		helperTargetEnv + "=" + dir,
		"TMPDIR=" + tmp,
		"PATH=" + os.Getenv("PATH"),
		// The race runtime sleeps a second at exit unless told not to.
		"GORACE=atexit_sleep_ms=0",
	}
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: otherUID, Gid: otherGID}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Start()
	if perr := unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0); perr != nil {
		t.Errorf("restoring the test process's dumpable flag: %v", perr)
	}
	t.Cleanup(func() {
		if ok, err := hardening.Dumpable(); err != nil || !ok {
			t.Errorf("the test process is not dumpable after starting the helper as another user (err %v)", err)
		}
	})
	if err == nil {
		err = cmd.Wait()
	}
	if err != nil {
		t.Fatalf("the helper as uid %d: %v\n%s", otherUID, err, stderr.Bytes())
	}
	var got []permissionOutcome
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("the helper's output %q: %v", stdout.Bytes(), err)
	}
	return got
}

// copyTestBinary copies the running test binary to dst, mode 0755.
func copyTestBinary(dst string) error {
	src, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding the test binary: %w", err)
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("copying the test binary: %w", err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return fmt.Errorf("copying the test binary: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copying the test binary: %w", err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("copying the test binary: %w", err)
	}
	return nil
}

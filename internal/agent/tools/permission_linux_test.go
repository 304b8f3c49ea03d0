package tools_test

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/volcanic/telegram-agent/internal/asusertest"
)

// publicTempDir creates a root-owned 0755 folder in the system's temporary
// folder (t.TempDir's parent is 0700, closed to another user), removed when
// the test ends.
func publicTempDir(t *testing.T) string {
	t.Helper()
	return asusertest.PublicDir(t)
}

// runPermissionHelperAsOther runs a copy of the test binary as
// asusertest.UID in the permission helper mode on dir, with its own
// temporary folder in base, and returns the results it printed.
func runPermissionHelperAsOther(t *testing.T, base, dir string) []permissionOutcome {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatalf("finding the test binary: %v", err)
	}
	exe := asusertest.PublicCopy(t, self, 0o755)
	tmp := filepath.Join(base, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(tmp, asusertest.UID, asusertest.GID); err != nil {
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
	asusertest.Drop(cmd)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := asusertest.Run(t, cmd); err != nil {
		t.Fatalf("the helper as uid %d: %v\n%s", asusertest.UID, err, stderr.Bytes())
	}
	var got []permissionOutcome
	if err := json.Unmarshal(stdout.Bytes(), &got); err != nil {
		t.Fatalf("the helper's output %q: %v", stdout.Bytes(), err)
	}
	return got
}

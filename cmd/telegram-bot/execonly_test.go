package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestExecuteOnlyBinaryIsNotDumpable proves the Dockerfile's reason for
// installing the binary root-owned and execute-only: a process executing a
// file its user cannot read is non-dumpable from execve on, even with
// hardening turned off, so no process Docker starts with the container's
// environment is ever readable by the agent's uid.
func TestExecuteOnlyBinaryIsNotDumpable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the binary must belong to another user than the one running it")
	}
	// Not t.TempDir: its parents are private to root, and the other user
	// must reach the binary.
	dir, err := os.MkdirTemp("", "telegram-bot-execonly-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "telegram-bot")
	data, err := os.ReadFile(botBinary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bin, data, 0o711); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(bin, 0o711); err != nil {
		t.Fatal(err)
	}
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, 65534, 65534); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []struct {
		perm os.FileMode
		want string
	}{
		{0o711, "this doctor process: not dumpable"},
		{0o755, "this doctor process: dumpable"},
	} {
		if err := os.Chmod(bin, mode.perm); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "doctor")
		cmd.Dir = home
		cmd.Env = []string{
			"PATH=/usr/bin:/bin",
			"HOME=" + home,
			"PROCESS_ENV_HARDEN_HOST_PROCESS=false",
			"TELEGRAM_BOT_TOKEN=123456:fake-token-execute-only-0015",
			"TELEGRAM_ALLOWED_USER_IDS=42",
			"TELEGRAM_API_URL=http://127.0.0.1:9",
			"OPENAI_BASE_URL=http://127.0.0.1:9/v1",
			"AGENT_DIR=" + filepath.Join(home, "data"),
			"WORKSPACE_DIR=" + filepath.Join(home, "workspace"),
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		out, _ := cmd.CombinedOutput()
		// Starting a child with other credentials from a root Go process
		// clears this process's dumpable flag too (the vfork child shares
		// the mm); put it back so the test runner stays debuggable.
		if err := unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0); err != nil {
			t.Fatalf("restore dumpable: %v", err)
		}
		if !strings.Contains(string(out), mode.want) {
			t.Errorf("binary mode %o: output lacks %q:\n%s", mode.perm, mode.want, out)
		}
	}
}

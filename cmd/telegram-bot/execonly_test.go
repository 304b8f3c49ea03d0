package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/asusertest"
)

// TestExecuteOnlyBinaryIsNotDumpable proves the Dockerfile's reason for
// installing the binary root-owned and execute-only: a process executing a
// file its user cannot read is non-dumpable from execve on, even with
// hardening turned off, so no process Docker starts with the container's
// environment is ever readable by the agent's uid.
func TestExecuteOnlyBinaryIsNotDumpable(t *testing.T) {
	if !asusertest.Needed() {
		t.Skip("needs root: the binary must belong to another user than the one running it")
	}
	bin := asusertest.PublicCopy(t, botBinary(t), 0o711)
	home := filepath.Join(filepath.Dir(bin), "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(home, asusertest.UID, asusertest.GID); err != nil {
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
		asusertest.Drop(cmd)
		out, _ := asusertest.CombinedOutput(t, cmd)
		if !strings.Contains(string(out), mode.want) {
			t.Errorf("binary mode %o: output lacks %q:\n%s", mode.perm, mode.want, out)
		}
	}
}

package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestClaudeLoginAndBridgeSubcommands runs the built binary: claude-login
// runs `claude auth login --claudeai` in the provider home with the
// provider's environment (none of the host's secrets), and the hidden
// bridge sub-command is dispatched (it refuses a missing config file).
func TestClaudeLoginAndBridgeSubcommands(t *testing.T) {
	bin := botBinary(t)
	agentDir, workspace, fakeBin := t.TempDir(), t.TempDir(), t.TempDir()
	script := "#!/bin/sh\n{ echo \"args: $*\"; echo \"pwd: $(pwd)\"; env; } > \"$HOME/login.txt\"\n"
	if err := os.WriteFile(filepath.Join(fakeBin, "claude"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	const token = "123456:fake-token-for-the-login-0001"
	env := []string{
		"PATH=" + fakeBin + ":/usr/bin:/bin",
		"HOME=" + workspace,
		"TELEGRAM_BOT_TOKEN=" + token,
		"TELEGRAM_ALLOWED_USER_IDS=42",
		"AGENT_DIR=" + agentDir,
		"WORKSPACE_DIR=" + workspace,
		"MODEL_PROVIDER=claude-code",
	}
	cmd := exec.Command(bin, "claude-login")
	cmd.Env = env
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "Logged in.") {
		t.Fatalf("claude-login: %v\n%s", err, out)
	}
	home := filepath.Join(agentDir, "claude-code")
	data, err := os.ReadFile(filepath.Join(home, "login.txt"))
	if err != nil {
		t.Fatal(err)
	}
	got := string(data)
	for _, want := range []string{"args: auth login --claudeai\n", "pwd: " + home + "\n", "HOME=" + home + "\n",
		"CLAUDE_CONFIG_DIR=" + filepath.Join(home, ".claude") + "\n"} {
		if !strings.Contains(got, want) {
			t.Errorf("claude auth login ran without %q", strings.TrimSpace(want))
		}
	}
	if strings.Contains(got, token) || strings.Contains(got, "TELEGRAM_") {
		t.Error("the host's configuration reached claude auth login")
	}

	bridge := exec.Command(bin, "claude-bridge", filepath.Join(t.TempDir(), "missing.json"))
	bridge.Env = env
	out, err := bridge.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "claudecode: bridge:") {
		t.Errorf("the bridge sub-command with a missing config: %v, %q", err, out)
	}
}

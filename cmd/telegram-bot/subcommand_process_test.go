package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// TestSubcommandsHardenAtStart runs the built binary's doctor and checks
// that the process hardened itself before doing anything (so a healthcheck
// or a doctor run never exposes the deployment's secrets through /proc),
// unless the operator opted out; and that healthcheck answers for a fresh
// and a missing heartbeat.
func TestSubcommandsHardenAtStart(t *testing.T) {
	bin := botBinary(t)
	agentDir, workspace := t.TempDir(), t.TempDir()
	base := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + workspace,
		"TELEGRAM_BOT_TOKEN=123456:fake-token-for-the-doctor-0001",
		"TELEGRAM_ALLOWED_USER_IDS=42",
		"AGENT_DIR=" + agentDir,
		"WORKSPACE_DIR=" + workspace,
	}
	tests := []struct {
		name  string
		extra []string
		want  string
	}{
		{name: "hardened by default", want: "this doctor process: not dumpable"},
		{name: "opt-out", extra: []string{"PROCESS_ENV_HARDEN_HOST_PROCESS=false"}, want: "this doctor process: dumpable"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin, "doctor")
			cmd.Env = append(append([]string{}, base...), tt.extra...)
			out, _ := cmd.CombinedOutput()
			if !strings.Contains(string(out), tt.want) {
				t.Errorf("doctor output lacks %q:\n%s", tt.want, out)
			}
			if strings.Contains(string(out), "fake-token-for-the-doctor") {
				t.Error("the doctor printed the bot token")
			}
		})
	}

	t.Run("healthcheck", func(t *testing.T) {
		run := func() (string, int) {
			cmd := exec.Command(bin, "healthcheck")
			cmd.Env = base
			out, err := cmd.Output()
			code := 0
			if ee, ok := err.(*exec.ExitError); ok {
				code = ee.ExitCode()
			} else if err != nil {
				t.Fatal(err)
			}
			return string(out), code
		}
		if out, code := run(); code != 1 || !strings.HasPrefix(out, "unhealthy: no heartbeat") {
			t.Errorf("missing heartbeat: exit %d, %q", code, out)
		}
		beat := filepath.Join(agentDir, HeartbeatFile)
		if err := os.WriteFile(beat, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if out, code := run(); code != 0 || out != "healthy\n" {
			t.Errorf("fresh heartbeat: exit %d, %q", code, out)
		}
		old := time.Now().Add(-5 * time.Minute)
		if err := os.Chtimes(beat, old, old); err != nil {
			t.Fatal(err)
		}
		if out, code := run(); code != 1 || !strings.HasPrefix(out, "unhealthy: heartbeat is") {
			t.Errorf("stale heartbeat: exit %d, %q", code, out)
		}
	})
}

// TestRejectedTokenExitsWithConfigCode starts the bot against a Bot API
// that does not know its token: it must say so plainly, without the token,
// and exit with EX_CONFIG so a supervisor does not restart it in a loop.
func TestRejectedTokenExitsWithConfigCode(t *testing.T) {
	tg := telegramtest.New(t, telegramtest.WithToken("999999:the-token-telegram-knows-0013"))
	const token = "123456:a-token-telegram-rejects-0014"
	workspace := t.TempDir()
	cmd := exec.Command(botBinary(t))
	cmd.Env = []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + workspace,
		"TELEGRAM_BOT_TOKEN=" + token,
		"TELEGRAM_ALLOWED_USER_IDS=42",
		"TELEGRAM_API_URL=" + tg.URL(),
		"OPENAI_BASE_URL=http://127.0.0.1:9/v1",
		"AGENT_DIR=" + t.TempDir(),
		"WORKSPACE_DIR=" + workspace,
	}
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != exitConfig {
		t.Fatalf("exit = %v, want code %d; output:\n%s", err, exitConfig, out)
	}
	if !strings.Contains(string(out), "TELEGRAM_BOT_TOKEN was rejected by Telegram") {
		t.Errorf("the log does not say the token was rejected:\n%s", out)
	}
	if strings.Contains(string(out), "a-token-telegram-rejects") {
		t.Error("the log holds the token")
	}
}

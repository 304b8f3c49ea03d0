package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
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
		// Started as root (as CI runs), the bot stays root as it did: these
		// tests are not about the agent's uid (agent_user_test.go is).
		"AGENT_ALLOW_ROOT=1",
		"WORKSPACE_DIR=" + workspace,
	}
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != exitConfig {
		t.Fatalf("exit = %v, want code %d; output:\n%s", err, exitConfig, out)
	}
	if !strings.Contains(string(out), "telegram rejected TELEGRAM_BOT_TOKEN (401 Unauthorized)") {
		t.Errorf("the log does not say the token was rejected:\n%s", out)
	}
	if strings.Contains(string(out), "a-token-telegram-rejects") {
		t.Error("the log holds the token")
	}
}

// envVarNames returns the name of every variable Env reads.
func envVarNames() []string {
	var names []string
	t := reflect.TypeFor[Env]()
	for i := range t.NumField() {
		if name := t.Field(i).Tag.Get("envconfig"); name != "" {
			names = append(names, name)
		}
	}
	return names
}

// TestHelpAndVersion runs the built binary's --help, help, each
// sub-command's --help, version, --version and an unknown command, and
// checks their exit codes and what they print: the usage lists the
// sub-commands and the variables, run --help the variables, an unknown
// command exits 2 with the usage. None starts the bot or prints the token.
func TestHelpAndVersion(t *testing.T) {
	bin := botBinary(t)
	const token = "123456:fake-token-for-the-help-0021"
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"TELEGRAM_BOT_TOKEN=" + token,
		"TELEGRAM_ALLOWED_USER_IDS=42",
		// Nothing may be polled: an address where no Bot API listens.
		"TELEGRAM_API_URL=http://127.0.0.1:9",
		"AGENT_DIR=" + t.TempDir(),
		// Started as root (as CI runs), the bot stays root as it did: these
		// tests are not about the agent's uid (agent_user_test.go is).
		"AGENT_ALLOW_ROOT=1",
		"WORKSPACE_DIR=" + t.TempDir(),
	}
	usage := []string{"Usage: telegram-bot [command] [--help]", "Commands:", "Environment:"}
	for _, c := range commands() {
		usage = append(usage, "  "+c.name+strings.Repeat(" ", max(1, 13-len(c.name)))+c.summary)
	}
	usage = append(usage, envVarNames()...)
	version := regexp.MustCompile(`^telegram-bot \S+( \S+)? go1\.\d+\S*\n$`)
	tests := []struct {
		name string
		args []string
		code int
		// stdout and stderr are the text each must hold; version, when
		// set, means stdout is exactly the version line.
		stdout, stderr []string
		version        bool
	}{
		{name: "--help", args: []string{"--help"}, stdout: usage},
		{name: "help", args: []string{"help"}, stdout: usage},
		{name: "run --help", args: []string{"run", "--help"},
			stderr: append([]string{"Usage: telegram-bot run [flags]", "start the bot", "Environment:"}, envVarNames()...)},
		{name: "doctor --help", args: []string{"doctor", "--help"},
			stderr: []string{"Usage: telegram-bot doctor [flags]", "check the configuration and the host"}},
		{name: "healthcheck --help", args: []string{"healthcheck", "--help"},
			stderr: []string{"Usage: telegram-bot healthcheck [flags]", "heartbeat is fresh"}},
		{name: "version --help", args: []string{"version", "--help"},
			stderr: []string{"Usage: telegram-bot version [flags]", "print the version"}},
		{name: "version", args: []string{"version"}, version: true},
		{name: "--version", args: []string{"--version"}, version: true},
		{name: "unknown command", args: []string{"frobnicate"}, code: 2,
			stderr: append([]string{`telegram-bot: unknown command "frobnicate"`}, usage...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.CommandContext(t.Context(), bin, tt.args...)
			cmd.Env = env
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			code := 0
			if err := cmd.Run(); err != nil {
				var ee *exec.ExitError
				if !errors.As(err, &ee) {
					t.Fatal(err)
				}
				code = ee.ExitCode()
			}
			if code != tt.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tt.code, stderr.String())
			}
			for _, stream := range []struct {
				name string
				got  string
				want []string
			}{
				{name: "stdout", got: stdout.String(), want: tt.stdout},
				{name: "stderr", got: stderr.String(), want: tt.stderr},
			} {
				for _, want := range stream.want {
					if !strings.Contains(stream.got, want) {
						t.Errorf("%s lacks %q:\n%s", stream.name, want, stream.got)
					}
				}
				if strings.Contains(stream.got, "fake-token-for-the-help") {
					t.Errorf("%s holds the bot token", stream.name)
				}
			}
			if tt.version && !version.MatchString(stdout.String()) {
				t.Errorf("stdout %q is not one line \"telegram-bot <version> [<revision>] go1.N\"", stdout.String())
			}
		})
	}
}

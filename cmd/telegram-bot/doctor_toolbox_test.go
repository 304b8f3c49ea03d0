package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// TestDoctorToolboxAndDenySummary runs the doctor with a PATH of fake
// programs that print their versions the way the real ones do (pip left
// out, gh failing): the toolbox line names each version or says missing;
// the deny rules are told by what they catch, not counted.
func TestDoctorToolboxAndDenySummary(t *testing.T) {
	bin := t.TempDir()
	for name, output := range map[string]string{
		"node":    "v22.1.0",
		"npx":     "10.2.4",
		"python3": "Python 3.11.2",
		"git":     "git version 2.43.0",
		"curl":    "curl 8.5.0 (x86_64-pc-linux-gnu) libcurl/8.5.0",
		"gh":      "",
	} {
		script := "#!/bin/sh\necho '" + output + "'\n"
		if output == "" {
			script = "#!/bin/sh\nexit 3\n"
		}
		if err := os.WriteFile(filepath.Join(bin, name), []byte(script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	e := goodEnv()
	e.AgentDir = t.TempDir()
	e.WorkspaceDir = t.TempDir()
	e.ProcessEnvDeny = "MY_OWN_SETTING"
	environ := map[string]string{"PATH": bin, "HOME": "/home/bot"}
	out, _ := runDoctorIn(t, e, environ, func(context.Context, *spawnpolicy.Policy) error { return nil })
	flat := strings.Join(strings.Fields(out), " ")
	for _, want := range []string{
		"toolbox: node 22.1.0, npx 10.2.4, python3 3.11.2, pip missing, gh present, but --version fails, git 2.43.0, curl 8.5.0",
		"Process environment: allow: none (PROCESS_ENV_ALLOW)",
		"deny rules remove, by name: API keys (*_API_KEY), tokens (*_TOKEN), secrets (*_SECRET), passwords (*_PASSWORD), keys (*_KEY),",
		"the bot's and the model providers' own keys (TELEGRAM_BOT_TOKEN)",
		"and by name (PROCESS_ENV_DENY, or a variable holding another's secret): MY_OWN_SETTING",
	} {
		if !strings.Contains(flat, want) {
			t.Errorf("output lacks %q; output:\n%s", want, out)
		}
	}
	if strings.Contains(out, "deny rules,") {
		t.Errorf("the doctor counts the deny rules; output:\n%s", out)
	}
}

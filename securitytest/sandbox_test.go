package securitytest

import (
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// TestSecuritySandboxWithoutHardening runs the /proc, memory and sandbox
// vectors against the real binary with host hardening off
// (PROCESS_ENV_HARDEN_HOST_PROCESS=false): the agent sandbox alone must
// refuse them all. Landlock's ptrace rule keeps the bot's /proc entries
// out of reach of every spawn's domain, the view hides AGENT_DIR, and
// signal scoping refuses kill. TestSecurityDetectsUnhardenedBot is the
// control: the same /proc vectors leak with both off.
func TestSecuritySandboxWithoutHardening(t *testing.T) {
	if abi := sandbox.ABI(); abi < 6 {
		t.Skipf("needs Landlock ABI 6 (scoped signals), the kernel has %d", abi)
	}
	want := map[string]bool{"proc-ppid-environ": true, "proc-walk-to-bot": true, "dd-proc-mem": true,
		"sandbox-agent-dir": true, "sandbox-write-jobs": true, "sandbox-signal-bot": true}
	var probes []vector
	for _, v := range vectors() {
		if want[v.name] {
			probes = append(probes, v)
		}
	}
	if len(probes) != len(want) {
		t.Fatalf("found %d of the %d vectors", len(probes), len(want))
	}
	rows := runSuite(t, probes, []string{"PROCESS_ENV_HARDEN_HOST_PROCESS=false"})
	t.Logf("results:\n%s", formatTable(rows))
	for _, r := range rows {
		t.Run(r.vector+"/"+r.channel, func(t *testing.T) {
			switch r.outcome {
			case outcomeSkip:
				t.Skip(strings.Join(r.details, "; "))
			case outcomeLeak:
				t.Errorf("LEAK with hardening off and the sandbox on: %s", strings.Join(r.details, "; "))
			case outcomeFail:
				t.Errorf("FAIL with hardening off and the sandbox on: %s", strings.Join(r.details, "; "))
			}
		})
	}
}

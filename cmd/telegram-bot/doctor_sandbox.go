package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/volcanic/telegram-agent/internal/sandbox"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// sandboxProbeScript is what the doctor's sandboxed child tries; each line
// it prints is "<check>=ok" when the attempt succeeded and "<check>=refused"
// otherwise. The write check never changes jobs.json: it opens it for
// appending and writes nothing (or, without one, creates and removes a probe
// file beside it); the prlimit check only reads the doctor's limit, and the
// chmod check sets AGENT_DIR's mode to what it is.
const sandboxProbeScript = `if ls "$PROBE_AGENT_DIR" >/dev/null 2>&1; then echo list=ok; else echo list=refused; fi
if [ -e "$PROBE_JOBS" ]; then w="$PROBE_JOBS"; else w="$PROBE_AGENT_DIR/.doctor-sandbox-probe"; fi
if (: >> "$w") 2>/dev/null; then echo write=ok; [ "$w" = "$PROBE_JOBS" ] || rm -f "$w"; else echo write=refused; fi
if kill -0 "$PROBE_PID" 2>/dev/null; then echo signal=ok; else echo signal=refused; fi
if cat "/proc/$PROBE_PID/environ" >/dev/null 2>&1; then echo environ=ok; else echo environ=refused; fi
if ! command -v prlimit >/dev/null; then echo prlimit=missing; elif prlimit --pid "$PROBE_PID" --nofile >/dev/null 2>&1; then echo prlimit=ok; else echo prlimit=refused; fi
if chmod --reference="$PROBE_AGENT_DIR" "$PROBE_AGENT_DIR" 2>/dev/null; then echo chmod=ok; else echo chmod=refused; fi`

// sandboxCheck is one of the probe's checks.
type sandboxCheck struct{ key, what string }

// sandboxChecks returns the probe's checks, in order, with their lines.
func sandboxChecks() []sandboxCheck {
	return []sandboxCheck{
		{"list", "list AGENT_DIR"},
		{"write", "write jobs.json"},
		{"signal", "signal the doctor (kill -0)"},
		{"environ", "read the doctor's /proc/<pid>/environ"},
		{"prlimit", "read or set the doctor's limits (prlimit --pid)"},
		{"chmod", "change AGENT_DIR's mode (chmod)"},
	}
}

// doctorSandbox shows the agent sandbox (mode, Landlock ABI, the view) and
// proves it with a live probe: a child started through the launcher tries
// what an agent process must not do, and each attempt must be refused. It
// returns the directories the agent's processes may write, as the running
// bot counts them (see agentSandbox.agentWritable).
func doctorSandbox(ctx context.Context, r *report, cfg Config, environ func() map[string]string) []string {
	r.line("\nAgent sandbox (AGENT_SANDBOX=%s)", cfg.Sandbox.Mode)
	// Warm, as the running bot's: the probe goes to a launcher started
	// ahead, the path every bash call takes.
	box, err := setupSandbox(cfg, environ(), sandbox.WithWarm())
	if err != nil {
		r.problem("%v", err)
		return agentSandbox{}.agentWritable(cfg)
	}
	if box.launcher != nil {
		defer box.launcher.Close()
	}
	doctorSandboxProbe(ctx, r, cfg, environ, box)
	return box.agentWritable(cfg)
}

// doctorSandboxProbe shows box and runs the live probe through its
// launcher.
func doctorSandboxProbe(ctx context.Context, r *report, cfg Config, environ func() map[string]string, box agentSandbox) {
	if box.launcher == nil {
		if box.warn {
			// auto on a kernel without Landlock: the bot starts, but
			// the agent runs unconfined; ready it is not.
			r.problem("%s", box.line)
		} else {
			r.line("  %s", box.line)
		}
		return
	}
	r.line("  %s", box.line)
	for _, l := range box.view.Lines() {
		r.line("    %s", l)
	}
	r.line("  one launcher is kept started ahead, so a command does not wait for the launcher's start")
	r.line("  %s", egressLine(sandbox.DetectEgress(box.launcher.Executable())))
	if _, err := os.Stat(cfg.WorkspaceDir); err != nil {
		r.line("  live probe skipped: WORKSPACE_DIR does not exist yet (the bot creates it at start)")
		return
	}
	opts := cfg.Policy
	opts.HardenHostProcess = false
	opts.Sandbox = box.launcher
	policy, err := spawnpolicy.New(opts, slog.New(slog.DiscardHandler), environ)
	if err != nil {
		r.problem("agent sandbox probe: %v", err)
		return
	}
	got, err := probeSandbox(ctx, policy, cfg)
	if err != nil {
		r.problem("agent sandbox probe: %v", err)
		return
	}
	r.line("  live probe (a sandboxed child tries each, as the agent would):")
	for _, c := range sandboxChecks() {
		switch got[c.key] {
		case "refused":
			r.line("    ✔ %s: refused", c.what)
		case "missing":
			r.line("    - %s: not probed (prlimit is not installed)", c.what)
		case "ok":
			r.line("    ✘ %s: allowed", c.what)
			if c.key == "chmod" {
				// One uid for the bot and the agent: Landlock has no
				// right for a file's mode, and the owner may always
				// change it.
				r.warn("a sandboxed child can change the modes of AGENT_DIR, which the bot's user owns: the bot restores them at start and when a write is refused; agent processes under a uid of their own cannot")
				continue
			}
			if c.key == "environ" && os.Geteuid() == 0 {
				// Observed on Linux 6.18: a root child reads a root
				// process's environ whatever its domain.
				r.warn("the doctor runs as root, and Landlock does not keep a root child from another root process's /proc/<pid>/environ: run the bot as an unprivileged user")
				continue
			}
			r.problems = append(r.problems, "agent sandbox: a sandboxed child could "+c.what)
		default:
			r.line("    ✘ %s: no answer", c.what)
			r.problems = append(r.problems, "agent sandbox: the probe did not answer "+c.what)
		}
	}
}

// probeSandbox runs sandboxProbeScript through the policy (and so through
// the launcher) and returns its answers by check.
func probeSandbox(ctx context.Context, policy *spawnpolicy.Policy, cfg Config) (map[string]string, error) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		return nil, errors.New("bash is not installed")
	}
	agentDir, jobs, pid := cfg.AgentDir, filepath.Join(cfg.AgentDir, "jobs.json"), strconv.Itoa(os.Getpid())
	pc, err := policy.Prepare(spawnpolicy.Request{
		Purpose: spawnpolicy.Other,
		Command: sandboxProbeScript,
		Cwd:     cfg.WorkspaceDir,
		Env:     map[string]*string{"PROBE_AGENT_DIR": &agentDir, "PROBE_JOBS": &jobs, "PROBE_PID": &pid},
		Origin:  "doctor",
	})
	if err != nil {
		return nil, err
	}
	out, err := runPrepared(ctx, pc, bash, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, strings.TrimSpace(string(out)))
	}
	got := map[string]string{}
	for _, line := range strings.Split(string(out), "\n") {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), "="); ok {
			got[k] = v
		}
	}
	return got, nil
}

// egressLine says at which tier the launcher could confine agent
// processes' network to the egress proxy (an allow-list of hosts needs
// one), and why a better tier is out of reach.
func egressLine(tier sandbox.EgressTier, short error) string {
	line := fmt.Sprintf("network confinement to the egress proxy: %s (%s)", tier, tier.Describe())
	if short != nil {
		line += "; " + strings.ReplaceAll(short.Error(), "\n", "; ")
	}
	return line
}

package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/volcanic/telegram-agent/internal/hardening"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// hardenProbeCommand is the hidden sub-command the doctor starts to see
// whether hardening works on this host: the probe hardens itself and reports
// what PR_GET_DUMPABLE reads back.
const hardenProbeCommand = "__harden-probe"

// report collects the doctor's findings: problems make it exit 1, warnings
// do not.
type report struct {
	w        io.Writer
	problems []string
	warnings []string
}

func (r *report) line(format string, args ...any) { fmt.Fprintf(r.w, format+"\n", args...) }

func (r *report) problem(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.problems = append(r.problems, msg)
	r.line("  PROBLEM: %s", msg)
}

func (r *report) warn(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	r.warnings = append(r.warnings, msg)
	r.line("  warning: %s", msg)
}

// runDoctor loads and validates the configuration exactly as run does, then
// reports what agent processes will and will not see and whether the host is
// ready. It prints names, counts and rules, never a secret value.
func runDoctor(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("doctor", "check the configuration and the host; print what agent processes will and will not see", stderr)
	if code, done := parseFlags(fs, args); done {
		return code
	}
	return doctor(ctx, stdout, doctorDeps{
		loadEnv: LoadEnv,
		lookup:  os.LookupEnv,
		environ: environMap,
		probe:   probeHardening,
		client:  &http.Client{},
	})
}

// doctorDeps is what the doctor reads the host through, so tests can give
// it a configuration and an environment without touching their own.
type doctorDeps struct {
	loadEnv func() (Env, error)
	lookup  func(string) (string, bool)
	environ func() map[string]string
	probe   func(context.Context, *spawnpolicy.Policy) error
	// client makes the connectivity checks.
	client *http.Client
}

// environMap returns the process environment as a map.
func environMap() map[string]string {
	env := make(map[string]string)
	for _, kv := range os.Environ() {
		if k, v, ok := strings.Cut(kv, "="); ok && k != "" {
			env[k] = v
		}
	}
	return env
}

func doctor(ctx context.Context, stdout io.Writer, deps doctorDeps) int {
	r := &report{w: stdout}
	r.line("telegram-bot doctor, version %s", buildVersion())

	r.line("\nConfiguration")
	e, err := deps.loadEnv()
	if err != nil {
		r.problem("%v", err)
		return r.finish()
	}
	cfg, err := e.Parse(deps.environ())
	if err != nil {
		for _, p := range strings.Split(err.Error(), "\n") {
			r.problem("%s", p)
		}
		return r.finish()
	}
	r.line("  ok: %d allowed user(s), model %s, Bot API %s", len(cfg.AllowedUserIDs), cfg.Model, hostOf(cfg.APIURL))
	if cfg.StrangerReply {
		r.line("  users who are not allowed: told their id once a day (STRANGER_REPLY=on)")
	} else {
		r.line("  users who are not allowed: ignored silently (STRANGER_REPLY=off)")
	}
	doctorUpdates(r, cfg)
	for _, w := range cfg.Warnings {
		r.warn("%s", w)
	}
	doctorUsage(r, cfg)

	policy := doctorProcessEnvironment(r, cfg, deps.environ)
	doctorCredentials(ctx, r, cfg, deps.environ)
	if policy != nil {
		doctorHardening(ctx, r, cfg, deps.probe, policy)
	}
	agentWritable := doctorSandbox(ctx, r, cfg, deps.environ)
	doctorAgentUser(r, cfg)
	doctorSockets(ctx, r, hostSocketPlaces(os.Getuid(), deps.environ()))
	doctorTools(r, cfg)
	doctorClaude(ctx, r, cfg, deps.environ)
	doctorToolbox(ctx, r, policy)
	doctorApprovals(r, cfg)
	doctorDirs(r, cfg)
	if policy != nil {
		doctorMCP(ctx, r, cfg, deps.lookup, policy, agentWritable)
	}
	doctorJobs(r, cfg)
	doctorOnline(ctx, r, cfg, deps.client)
	return r.finish()
}

// doctorProcessEnvironment prints the policy summary and every inherited
// variable a child would lose, with the rule that removes it. It returns the
// policy (nil when it cannot be built) for the MCP check.
func doctorProcessEnvironment(r *report, cfg Config, environ func() map[string]string) *spawnpolicy.Policy {
	r.line("\nWhat agent processes see")
	// The doctor was hardened at start (main), like every sub-command; the
	// policy it builds only inspects, so it must not log or harden again.
	opts := cfg.Policy
	opts.HardenHostProcess = false
	policy, err := spawnpolicy.New(opts, slog.New(slog.DiscardHandler), environ)
	if err != nil {
		r.problem("spawn policy: %v", err)
		return nil
	}
	r.line("  Process environment: %s", allowSummary(policy))
	for _, l := range denySummary(cfg.Policy.Deny) {
		r.line("  %s", l)
	}
	if len(cfg.SecretNames) == 0 {
		r.line("  secret values: none configured")
	} else {
		r.line("  secret values: %d distinct, from %s (values are never shown)", len(cfg.Policy.SecretValues), strings.Join(cfg.SecretNames, ", "))
	}
	for _, name := range cfg.Passed {
		r.line("  %s: passed to agent processes; its value is redacted", name)
	}
	removals := policy.Explain()
	if kept := secretLookingKept(environ(), removals, append(policy.AllowNames(), cfg.Passed...)); len(kept) > 0 {
		r.warn("agent processes keep these variables although they look secret: %s (add them to PROCESS_ENV_DENY or PROCESS_ENV_SECRETS, or to PROCESS_ENV_ALLOW to keep them on purpose)", strings.Join(kept, ", "))
	}
	if len(removals) == 0 {
		r.line("  agent processes lose no inherited variable")
		return policy
	}
	r.line("  agent processes will not see these inherited variables:")
	tw := tabwriter.NewWriter(r.w, 0, 4, 2, ' ', 0)
	for _, rm := range removals {
		if slices.Contains(cfg.DeniedRedacted, rm.Name) {
			fmt.Fprintf(tw, "    %s\t(%s: removed and redacted)\n", rm.Name, rm.Rule)
			continue
		}
		fmt.Fprintf(tw, "    %s\t(%s)\n", rm.Name, rm.Rule)
	}
	tw.Flush()
	return policy
}

// doctorHardening reports whether hardening will be in force and whether it
// works, by starting a probe that hardens itself. The probe is started like
// every other child, through policy.
func doctorHardening(ctx context.Context, r *report, cfg Config, probe func(context.Context, *spawnpolicy.Policy) error, policy *spawnpolicy.Policy) {
	r.line("\nHost hardening")
	switch {
	case runtime.GOOS != "linux":
		r.warn("not Linux: agent processes may be able to read the bot's environment")
		return
	case !cfg.Policy.HardenHostProcess:
		r.warn("disabled by PROCESS_ENV_HARDEN_HOST_PROCESS=false: agent processes can read this process's environment")
	case os.Geteuid() == 0:
		r.warn("running as root: root reads every process's environment, hardened or not; run the bot as an unprivileged user (the Docker image does)")
	default:
		r.line("  enabled, running as uid %d", os.Geteuid())
	}
	if err := probe(ctx, policy); err != nil {
		r.problem("hardening does not work on this host: %v", err)
		return
	}
	r.line("  works: a hardened probe process reads back not dumpable")
	if w := exposingParent("/proc", os.Getppid(), cfg.Policy.SecretValues); w != "" {
		r.warn("%s; a shell opened in the container holds them the same way while it is open", w)
	}
	if dumpable, err := hardening.Dumpable(); err == nil {
		if dumpable {
			r.line("  this doctor process: dumpable (hardening is off for it)")
		} else {
			r.line("  this doctor process: not dumpable (hardened at start, like every sub-command)")
		}
	}
}

// probeHardening starts this binary's hidden probe and checks its answer.
// Its context comes from the spawn policy, as every child's does; the
// explicit PROCESS_ENV_HARDEN_HOST_PROCESS=true makes the probe harden itself
// whatever the inherited setting.
func probeHardening(ctx context.Context, policy *spawnpolicy.Policy) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("find own executable: %w", err)
	}
	on := "true"
	pc, err := policy.Prepare(spawnpolicy.Request{
		Purpose: spawnpolicy.Other,
		Command: exe,
		Args:    []string{hardenProbeCommand},
		Cwd:     os.TempDir(),
		Env:     map[string]*string{"PROCESS_ENV_HARDEN_HOST_PROCESS": &on},
		Origin:  "doctor",
	})
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, pc.Command, pc.Args...)
	pc.ApplyTo(cmd)
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("probe: %w", err)
	}
	if got := strings.TrimSpace(string(out)); got != "not dumpable" {
		return fmt.Errorf("probe reported %q", got)
	}
	return nil
}

// runHardenProbe is the probe: harden, then report PR_GET_DUMPABLE.
func runHardenProbe(_ context.Context, _ []string, stdout, stderr io.Writer) int {
	hardening.Apply(true, slog.New(slog.DiscardHandler))
	dumpable, err := hardening.Dumpable()
	if err != nil {
		fmt.Fprintf(stderr, "dumpable: %v\n", err)
		return 1
	}
	if dumpable {
		fmt.Fprintln(stdout, "dumpable")
		return 0
	}
	fmt.Fprintln(stdout, "not dumpable")
	return 0
}

// doctorTools checks what the agent's tools need on the host.
func doctorTools(r *report, cfg Config) {
	r.line("\nTools")
	if path, err := exec.LookPath("bash"); err != nil {
		r.problem("bash not found on PATH: the bash tool and watcher scripts cannot run")
	} else {
		r.line("  bash: %s", path)
	}
	if _, err := time.LoadLocation("America/New_York"); err != nil {
		r.problem("no time zone database (install tzdata): %v", err)
	} else {
		r.line("  time zone database: present")
	}
	zone := cfg.DefaultTimeZone
	if zone == "" {
		zone = "the host's (" + time.Local.String() + ")"
	}
	r.line("  default time zone: %s", zone)
}

// lowDiskSpace is the free space under which doctor warns about a
// directory: the transcripts, the journal and the agent's files grow, and
// a full disk holds every new message back (see the operator guide).
const lowDiskSpace = 100 << 20

// doctorDirs checks that the agent dir and the workspace exist (or can be
// created) and are writable, and says how much space they have left.
func doctorDirs(r *report, cfg Config) {
	r.line("\nDirectories")
	for _, d := range []struct{ name, path string }{{"AGENT_DIR", cfg.AgentDir}, {"WORKSPACE_DIR", cfg.WorkspaceDir}} {
		if err := checkWritableDir(d.path); err != nil {
			r.problem("%s %s: %v", d.name, d.path, err)
			continue
		}
		var st syscall.Statfs_t
		if err := syscall.Statfs(d.path, &st); err != nil {
			r.line("  %s %s: writable", d.name, d.path)
			continue
		}
		free := int64(st.Bavail) * st.Bsize
		r.line("  %s %s: writable, %s free", d.name, d.path, formatBytes(free))
		if free < lowDiskSpace {
			r.warn("%s %s has only %s free: when it fills, new messages wait at Telegram and the health check fails until space is freed", d.name, d.path, formatBytes(free))
		}
	}
}

// checkWritableDir creates dir when missing and proves it writable by
// writing a byte to a file in it and removing it: an empty file needs no
// space, so only a write shows a full disk.
func checkWritableDir(dir string) error {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("cannot create: %w", err)
	}
	f, err := os.CreateTemp(dir, ".doctor-*")
	if err != nil {
		return fmt.Errorf("not writable: %w", err)
	}
	name := f.Name()
	_, werr := f.Write([]byte{'\n'})
	if werr != nil {
		werr = fmt.Errorf("not writable: %w", werr)
	}
	return errors.Join(werr, f.Close(), os.Remove(name))
}

// formatBytes returns n in binary units, one decimal.
func formatBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTP"[exp])
}

// finish prints the verdict and returns the exit code.
func (r *report) finish() int {
	r.line("")
	if len(r.problems) == 0 {
		if len(r.warnings) > 0 {
			r.line("Ready, with %d warning(s).", len(r.warnings))
		} else {
			r.line("Ready.")
		}
		return 0
	}
	r.line("Not ready: %d problem(s), marked PROBLEM above.", len(r.problems))
	return 1
}

// hostOf returns the host of a URL, for display without any credentials or
// path the URL may hold.
func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	return u.Host
}

// secretLookingKept returns, sorted, the inherited variables agent processes
// keep that look like they hold a secret: by name (SECRET, TOKEN, PASSWORD,
// an API or access key, a name ending in _KEY or _PASS) or by value (a URL
// with a password in it, as a DATABASE_URL has). Variables the operator
// allowed on purpose (an Allow entry naming them exactly, or a variable
// passed with its value redacted) are left out.
func secretLookingKept(environ map[string]string, removals []spawnpolicy.Removal, allow []string) []string {
	removed := make(map[string]bool, len(removals))
	for _, rm := range removals {
		removed[rm.Name] = true
	}
	var out []string
	for name, value := range environ {
		if removed[name] || slices.ContainsFunc(allow, func(a string) bool { return strings.EqualFold(a, name) }) {
			continue
		}
		if secretLookingName(name) || hasURLPassword(value) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// secretLookingName reports whether a variable's name suggests a secret.
func secretLookingName(name string) bool {
	upper := strings.ToUpper(name)
	for _, word := range []string{"SECRET", "TOKEN", "PASSWORD", "PASSWD", "PASSPHRASE", "APIKEY", "API_KEY", "PRIVATE_KEY", "ACCESS_KEY", "CREDENTIAL"} {
		if strings.Contains(upper, word) {
			return true
		}
	}
	return strings.HasSuffix(upper, "_KEY") || strings.HasSuffix(upper, "_PASS")
}

// hasURLPassword reports whether s is a URL whose user information holds a
// password.
func hasURLPassword(s string) bool {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" || u.User == nil {
		return false
	}
	_, ok := u.User.Password()
	return ok
}

package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/volcanic/telegram-agent/internal/credproxy"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// doctorCredentials shows the bindings, the stand-ins' shape, the egress
// tier and the CA's fingerprint, and proves them live: a proxy started as
// the bot starts its own answers, and a sandboxed child's copy of each
// bound variable differs from the real value. Names, hosts and shapes
// only, never a value.
func doctorCredentials(ctx context.Context, r *report, cfg Config, environ func() map[string]string) {
	s := cfg.Credentials
	r.line("\nCredentials (CREDENTIAL_HOSTS, AGENT_EGRESS=%s)", s.Egress)
	for _, c := range s.Credentials {
		r.line("  %s: agent processes get a stand-in; the proxy puts the real value into requests to %s", c.Variable, strings.TrimPrefix(bindingText(c.Binding), c.Variable+" "))
	}
	for _, name := range s.Clear {
		r.warn("%s is held in the clear: agent processes get its real value (redacted from what they print, but theirs to send anywhere); bind it to its hosts in CREDENTIAL_HOSTS", name)
	}
	if len(s.Allow) > 0 {
		r.line("  AGENT_EGRESS_ALLOW: %s", strings.Join(s.Allow, ", "))
	}
	if len(s.Credentials) == 0 && s.Egress == credproxy.Open {
		r.line("  no bound credential and egress open: the proxy is off")
		return
	}
	// The doctor's own bundle: the running bot's stays as it is.
	dir, err := os.MkdirTemp("", "telegram-bot-doctor-ca-")
	if err != nil {
		r.problem("credential proxy: %v", err)
		return
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		r.problem("credential proxy: %v", err)
		return
	}
	cp := startCredentialProxy(cfg, environ(), redactor.New(cfg.Policy.SecretValues), nil, dir+"/ca")
	defer cp.Close()
	if cp.err != nil {
		r.problem("the credential proxy cannot start (%v): the bot would withhold %s from agent processes", cp.err, strings.Join(cp.withheld, ", "))
		return
	}
	if err := proxyAnswers(ctx, cp.proxy.URL()); err != nil {
		r.problem("the credential proxy does not answer: %v", err)
		return
	}
	r.line("  proxy: answers on loopback (the bot's own listens on a port of its own at each start)")
	standIns := cp.proxy.StandIns()
	for _, c := range s.Credentials {
		r.line("  %s stand-in: %s, new at each start", c.Variable, credproxy.Shape(standIns[c.Variable]))
	}
	if fp := cp.proxy.CAFingerprint(); fp != "" {
		r.line("  CA: ECDSA P-256, made at each start, key in memory only, valid %d days (a successor after half), SHA-256 %s (this doctor's; the bot logs its own)", int(credproxy.DefaultCALifetime.Hours()/24), fp)
	}
	doctorStandInProbe(ctx, r, cfg, environ, cp)
	if s.Egress != credproxy.Open {
		doctorEgressProbe(ctx, r, cfg, environ, cp)
	}
}

// proxyAnswers asks the proxy at proxyURL for its one-line answer.
func proxyAnswers(ctx context.Context, proxyURL string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, proxyURL+"/", nil)
	if err != nil {
		return err
	}
	resp, err := (&http.Client{Transport: &http.Transport{Proxy: nil}}).Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), "credential proxy") {
		return fmt.Errorf("unexpected answer %d", resp.StatusCode)
	}
	return nil
}

// doctorStandInProbe starts a child as the bot starts agent processes
// (the spawn policy, the sandbox) and compares what it holds for each
// bound variable with the real value; it prints only whether they differ.
func doctorStandInProbe(ctx context.Context, r *report, cfg Config, environ func() map[string]string, cp credentialProxy) {
	if len(cfg.Credentials.Credentials) == 0 {
		return
	}
	if _, err := os.Stat(cfg.WorkspaceDir); err != nil {
		r.line("  live probe skipped: WORKSPACE_DIR does not exist yet (the bot creates it at start)")
		return
	}
	cp.apply(&cfg.Policy, &cfg.Sandbox)
	box, err := setupSandbox(cfg, environ())
	if err != nil {
		r.problem("credential proxy probe: %v", err)
		return
	}
	if box.launcher != nil {
		defer box.launcher.Close()
	}
	opts := cfg.Policy
	opts.HardenHostProcess = false
	opts.Sandbox = box.launcher
	policy, err := spawnpolicy.New(opts, nil, environ)
	if err != nil {
		r.problem("credential proxy probe: %v", err)
		return
	}
	var script strings.Builder
	for _, c := range cfg.Credentials.Credentials {
		fmt.Fprintf(&script, `printf '%%s\0' "${%s-}"; `, c.Variable)
	}
	script.WriteString(`printf '%s\0' "${HTTPS_PROXY-}"; if [ -r "${SSL_CERT_FILE:-/nonexistent}" ]; then printf 'readable\0'; else printf 'unreadable\0'; fi`)
	got, err := runProbe(ctx, policy, "/bin/sh", script.String())
	if err != nil {
		r.problem("credential proxy probe: %v", err)
		return
	}
	if len(got) != len(cfg.Credentials.Credentials)+2 {
		r.problem("credential proxy probe: the child answered %d values, want %d", len(got), len(cfg.Credentials.Credentials)+2)
		return
	}
	where := "a sandboxed child"
	if box.launcher == nil {
		where = "a child (the sandbox is off)"
	}
	r.line("  live probe (%s, started as agent processes are):", where)
	for i, c := range cfg.Credentials.Credentials {
		switch got[i] {
		case "":
			r.line("    ✘ %s: missing", c.Variable)
			r.problems = append(r.problems, "credential proxy: agent processes do not get "+c.Variable)
		case c.Value:
			r.line("    ✘ %s: the real value", c.Variable)
			r.problems = append(r.problems, "credential proxy: agent processes get the real value of "+c.Variable)
		default:
			r.line("    ✔ %s: a stand-in of %d characters, not the real value", c.Variable, len(got[i]))
		}
	}
	if p := got[len(got)-2]; p != cp.proxy.URL() {
		r.line("    ✘ HTTPS_PROXY: not the proxy")
		r.problems = append(r.problems, "credential proxy: agent processes do not get HTTPS_PROXY")
	} else {
		r.line("    ✔ HTTPS_PROXY: the proxy")
	}
	if got[len(got)-1] != "readable" {
		r.line("    ✘ SSL_CERT_FILE: the CA bundle cannot be read")
		r.problems = append(r.problems, "credential proxy: agent processes cannot read the CA bundle")
	} else {
		r.line("    ✔ SSL_CERT_FILE: the CA bundle is readable")
	}
}

// runProbe runs script with shell through policy (and so through the
// launcher) and returns the NUL-terminated values it printed.
func runProbe(ctx context.Context, policy *spawnpolicy.Policy, shell, script string) ([]string, error) {
	pc, err := policy.Prepare(spawnpolicy.Request{Purpose: spawnpolicy.Other, Command: script, Cwd: os.TempDir(), Origin: "doctor"})
	if err != nil {
		return nil, err
	}
	var stderr strings.Builder
	out, err := runPrepared(ctx, pc, shell, &stderr)
	if err != nil {
		return nil, fmt.Errorf("the probe failed: %w: %s", err, strings.TrimSpace(stderr.String()))
	}
	parts := strings.Split(string(out), "\x00")
	return parts[:len(parts)-1], nil
}

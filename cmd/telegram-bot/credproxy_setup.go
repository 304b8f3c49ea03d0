package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/volcanic/telegram-agent/internal/credproxy"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/sandbox"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// credentialProxy is the credential proxy the bot runs with, or the
// reason it does not: what agent processes get instead of the bound
// variables, and the start-up line.
type credentialProxy struct {
	// proxy is nil when nothing is bound and egress is open, or when it
	// could not start (err says why).
	proxy *credproxy.Proxy
	// bundle is the CA bundle's path, "" without a CA.
	bundle string
	// withheld are the bound variables agent processes do not get at
	// all, because the proxy could not start.
	withheld []string
	err      error
	settings credentialSettings
}

// caBundleDir is the directory of the agent's CA bundle: outside AGENT_DIR
// (which the sandbox hides) and outside the sandbox's writable temporary
// directory, readable by every user (an AGENT_UID of its own too), written
// by the bot's user alone.
func caBundleDir() string {
	return filepath.Join(os.TempDir(), "telegram-agent-ca-"+strconv.Itoa(os.Geteuid()))
}

// bundleName is the CA bundle's file name for the bot whose state is in
// agentDir: two bots of one user each have their own (one AGENT_DIR holds
// one bot), and a restart writes the same file again.
func bundleName(agentDir string) string {
	sum := sha256.Sum256([]byte(agentDir))
	return "ca-bundle-" + hex.EncodeToString(sum[:6]) + ".pem"
}

// ownBundleDir makes dir (mode 0755) and checks that it is a directory
// of the bot's user that nobody else may write: another user could
// otherwise plant a bundle there that agent processes would trust.
func ownBundleDir(dir string) error {
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return fmt.Errorf("make the CA bundle's directory %s: %w", dir, err)
	}
	info, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("the CA bundle's directory: %w", err)
	}
	st, ok := info.Sys().(*syscall.Stat_t)
	if !info.IsDir() || !ok || int(st.Uid) != os.Geteuid() || info.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("the CA bundle's directory %s is not a directory of the bot's user that only it may write", dir)
	}
	return nil
}

// startCredentialProxy starts the credential proxy when a credential is
// bound or egress is not open. It fails closed: when the proxy or its CA
// bundle cannot be made, every bound variable is withheld from agent
// processes, never passed with its real value. red knows every secret of
// the host; bundleDir is where the CA bundle goes.
func startCredentialProxy(cfg Config, environ map[string]string, red *redactor.Redactor, logger *slog.Logger, bundleDir string) credentialProxy {
	s := cfg.Credentials
	cp := credentialProxy{settings: s}
	if len(s.Credentials) == 0 && s.Egress == credproxy.Open {
		return cp
	}
	p, err := credproxy.Start(credproxy.Config{
		Credentials: s.Credentials,
		Egress:      s.Egress,
		Allow:       s.Allow,
		Named:       s.Named,
		Redactor:    red,
		Logger:      logger,
	})
	if err == nil && p.CAPEM() != nil {
		cp.bundle = filepath.Join(bundleDir, bundleName(cfg.AgentDir))
		err = ownBundleDir(bundleDir)
		var roots []byte
		if err == nil {
			roots, err = credproxy.SystemRoots(environ["SSL_CERT_FILE"])
		}
		if err == nil {
			err = p.WriteBundle(cp.bundle, roots)
		}
		if err != nil {
			p.Close()
		}
	}
	if err != nil {
		cp.err, cp.bundle, cp.withheld = err, "", s.names()
		return cp
	}
	cp.proxy = p
	return cp
}

// apply gives the spawn policy's options what agent processes get: the
// stand-ins, the proxy's variables and its notices of refused
// certificates, or, when the proxy is not running for bound variables,
// those variables withheld. The bundle's directory is added to what the
// sandbox lets agent processes read.
func (cp credentialProxy) apply(opts *spawnpolicy.Options, sb *SandboxConfig) {
	if len(cp.withheld) > 0 {
		opts.Withhold = append(opts.Withhold, cp.withheld...)
		opts.StandIns = nil
		return
	}
	if cp.proxy == nil {
		return
	}
	opts.StandIns = cp.proxy.StandIns()
	opts.Extra = cp.proxy.AgentEnv(cp.bundle)
	// A client that refuses the proxy's certificate (it pins, or trusts
	// only its own CA store) gets a line in the bash tool's result
	// saying so.
	opts.Notices = cp.proxy
	if cp.bundle == "" {
		for _, v := range credproxy.CAVariables {
			delete(opts.Extra, v.Name)
		}
	} else if sb.Mode != sandbox.Off {
		sb.Read = append(sb.Read, filepath.Dir(cp.bundle))
	}
}

// Enforcement returns what the sandbox launcher needs to confine agent
// processes' network to the proxy; false when the proxy is not running.
func (cp credentialProxy) Enforcement() (credproxy.Enforcement, bool) {
	if cp.proxy == nil {
		return credproxy.Enforcement{}, false
	}
	return cp.proxy.Enforcement(), true
}

// Close stops the proxy.
func (cp credentialProxy) Close() {
	if cp.proxy != nil {
		cp.proxy.Close()
	}
}

// line returns the start-up line, names and hosts only: the tier, each
// binding with the hosts it is for, the CA's fingerprint, and the
// variables held in the clear. warn is set when bound variables are
// withheld.
func (cp credentialProxy) line() (text string, warn bool) {
	s := cp.settings
	var b strings.Builder
	switch {
	case cp.err != nil:
		fmt.Fprintf(&b, "Credential proxy: cannot start (%v); withheld from agent processes, never passed real: %s", cp.err, strings.Join(cp.withheld, ", "))
		warn = true
	case cp.proxy == nil:
		b.WriteString("Credential proxy: off (no bound credential, AGENT_EGRESS=open)")
	default:
		fmt.Fprintf(&b, "Credential proxy: %s, AGENT_EGRESS=%s", cp.proxy.Addr(), s.Egress)
		if len(s.Credentials) > 0 {
			b.WriteString("; stand-ins for ")
			for i, c := range s.Credentials {
				if i > 0 {
					b.WriteString(", ")
				}
				b.WriteString(bindingText(c.Binding))
			}
			fmt.Fprintf(&b, "; CA SHA-256 %s", cp.proxy.CAFingerprint())
		}
		if len(s.Allow) > 0 {
			fmt.Fprintf(&b, "; allowed: %s", strings.Join(s.Allow, ", "))
		}
	}
	if len(s.Clear) > 0 {
		fmt.Fprintf(&b, "; held in the clear (no binding in CREDENTIAL_HOSTS, the real value, redacted): %s", strings.Join(s.Clear, ", "))
	}
	return b.String(), warn
}

// bindingText is "GH_TOKEN (api.github.com, github.com; built-in)".
func bindingText(b credproxy.Binding) string {
	source := "CREDENTIAL_HOSTS"
	if b.Builtin {
		source = "built-in"
	}
	return fmt.Sprintf("%s (%s; %s)", b.Variable, strings.Join(b.Hosts, ", "), source)
}

// drawStandIns draws the bound variables' stand-ins into cfg before
// anything starts, so that the spawn policy's view of them (what ${VAR}
// expands to for what agent processes start, an MCP server's env among
// them) is the stand-in from the first. A value that cannot have one is
// left without: the proxy then refuses it at start, and it is withheld.
func drawStandIns(cfg *Config) {
	creds := cfg.Credentials.Credentials
	if len(creds) == 0 {
		return
	}
	red := redactor.New(cfg.Policy.SecretValues)
	if credproxy.DrawStandIns(creds, func(v string) bool { return red.Redact(v) != v }) != nil {
		return
	}
	cfg.Policy.StandIns = map[string]string{}
	for _, c := range creds {
		cfg.Policy.StandIns[c.Variable] = c.StandIn
	}
}

// addSecrets adds values (what the MCP configuration hands to servers) to
// the secret values, but for the stand-ins: a server given ${GH_TOKEN}
// gets the stand-in, which is worth nothing and must stay visible to the
// agent (a stand-in among the secrets would also be refused by the spawn
// policy).
func addSecrets(cfg *Config, values []string) {
	for _, v := range values {
		if slices.Contains(cfg.Policy.SecretValues, v) || slices.Contains(slices.Collect(maps.Values(cfg.Policy.StandIns)), v) {
			continue
		}
		cfg.Policy.SecretValues = append(cfg.Policy.SecretValues, v)
	}
}

// statusLines returns /status's lines for the credentials: each bound
// variable with its hosts and its stand-in's shape, the egress mode with
// how the kernel enforces it (egress, the start-up line's), and the CA's
// fingerprint; names, hosts and shapes only, never a value.
func (cp credentialProxy) statusLines(egress string) func() []string {
	return func() []string {
		if cp.proxy == nil {
			if cp.err != nil {
				return []string{"Credentials: the proxy did not start; bound variables are withheld from agent processes"}
			}
			return nil
		}
		var lines []string
		standIns := cp.proxy.StandIns()
		for _, c := range cp.settings.Credentials {
			lines = append(lines, fmt.Sprintf("Credential %s: a stand-in (%s) for agent processes, the real value only to %s",
				c.Variable, credproxy.Shape(standIns[c.Variable]), strings.Join(c.Hosts, ", ")))
		}
		mode := fmt.Sprintf("Egress: AGENT_EGRESS=%s", cp.settings.Egress)
		if egress != "" {
			mode += "; " + egress
		}
		lines = append(lines, mode)
		if fp := cp.proxy.CAFingerprint(); fp != "" {
			lines = append(lines, "Credential proxy CA: SHA-256 "+fp)
		}
		return lines
	}
}

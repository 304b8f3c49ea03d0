package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/credproxy"
	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

const (
	testGHToken  = "ghp_FakeRealGitHubToken0123456789abcdEF"
	testFooToken = "foo-fake-unbound-token-0041"
)

// credEnviron is an inherited environment with a bound and an unbound
// credential.
func credEnviron() map[string]string {
	return map[string]string{"PATH": "/usr/bin:/bin", "HOME": "/home/bot", "GH_TOKEN": testGHToken, "FOO_TOKEN": testFooToken}
}

func TestParseCredentials(t *testing.T) {
	tests := []struct {
		name                 string
		allow, hosts, egress string
		egressAllow          string
		wantBound, wantClear []string
		wantHosts            []string
		wantEgress           credproxy.Egress
		wantErr              []string
		wantNamed            []string
	}{
		{name: "built-in binding", allow: "GH_TOKEN,FOO_TOKEN", wantBound: []string{"GH_TOKEN"}, wantClear: []string{"FOO_TOKEN"},
			wantHosts: []string{"api.github.com", "github.com", "uploads.github.com", "raw.githubusercontent.com"}},
		{name: "CREDENTIAL_HOSTS overrides", allow: "GH_TOKEN,FOO_TOKEN", hosts: "GH_TOKEN=git.lan.example;FOO_TOKEN=*.foo.example",
			wantBound: []string{"FOO_TOKEN", "GH_TOKEN"}, wantHosts: []string{"*.foo.example"}, wantNamed: []string{"git.lan.example", "*.foo.example"}},
		{name: "allowlist", allow: "GH_TOKEN", egress: "allowlist", egressAllow: "pypi.org,*.pythonhosted.org",
			wantBound: []string{"GH_TOKEN"}, wantEgress: credproxy.Allowlist, wantNamed: []string{"pypi.org", "*.pythonhosted.org"},
			wantHosts: []string{"api.github.com", "github.com", "uploads.github.com", "raw.githubusercontent.com"}},
		{name: "not allowed", allow: "FOO_TOKEN", hosts: "GH_TOKEN=github.com", wantErr: []string{"GH_TOKEN is not allowed"}},
		{name: "bare star", allow: "GH_TOKEN", hosts: "GH_TOKEN=*", wantErr: []string{"CREDENTIAL_HOSTS: GH_TOKEN", "bare *"}},
		{name: "bad tier", egress: "closed", wantErr: []string{"AGENT_EGRESS must be"}},
		{name: "bare star allowed", egressAllow: "*", wantErr: []string{"AGENT_EGRESS_ALLOW", "bare *"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := goodEnv()
			e.ProcessEnvAllow, e.CredentialHosts, e.AgentEgress, e.AgentEgressAllow = tt.allow, tt.hosts, tt.egress, tt.egressAllow
			c, err := e.Parse(credEnviron())
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Parse: no error, want %q", tt.wantErr)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if strings.Contains(err.Error(), testGHToken) {
					t.Error("the error holds the token")
				}
				return
			}
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			s := c.Credentials
			if diff := cmp.Diff(tt.wantBound, s.names()); diff != "" {
				t.Errorf("bound (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantClear, s.Clear); diff != "" {
				t.Errorf("clear (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantHosts, s.Credentials[0].Hosts); diff != "" {
				t.Errorf("hosts (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNamed, s.Named); diff != "" {
				t.Errorf("named (-want +got):\n%s", diff)
			}
			if s.Egress != tt.wantEgress {
				t.Errorf("egress %v, want %v", s.Egress, tt.wantEgress)
			}
			for _, cr := range s.Credentials {
				if cr.Value != credEnviron()[cr.Variable] {
					t.Errorf("%s's credential does not hold its real value", cr.Variable)
				}
				if !slices.Contains(c.Policy.SecretValues, cr.Value) {
					t.Errorf("%s's real value is not a secret value: it would not be redacted", cr.Variable)
				}
			}
		})
	}
}

// credConfig parses a configuration that binds GH_TOKEN and passes
// FOO_TOKEN in the clear.
func credConfig(t *testing.T) Config {
	t.Helper()
	e := goodEnv()
	e.ProcessEnvAllow = "GH_TOKEN,FOO_TOKEN"
	e.AgentSandbox = "off"
	c, err := e.Parse(credEnviron())
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCredentialProxyStandIns(t *testing.T) {
	c := credConfig(t)
	dir := filepath.Join(t.TempDir(), "ca")
	cp := startCredentialProxy(c, credEnviron(), redactor.New(c.Policy.SecretValues), nil, dir)
	defer cp.Close()
	if cp.err != nil {
		t.Fatal(cp.err)
	}
	cp.apply(&c.Policy, &c.Sandbox)
	env := prepareBash(t, c, credEnviron()).Env
	standIn := env["GH_TOKEN"]
	if standIn == "" || standIn == testGHToken || len(standIn) != len(testGHToken) || !strings.HasPrefix(standIn, "ghp_") {
		t.Fatalf("GH_TOKEN reaches agent processes as %d bytes (real: %v), want a stand-in of the real value's shape", len(standIn), standIn == testGHToken)
	}
	if env["FOO_TOKEN"] != testFooToken {
		t.Error("the unbound FOO_TOKEN does not reach agent processes as before")
	}
	for _, v := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"} {
		if env[v] != cp.proxy.URL() {
			t.Errorf("%s = %q, want the proxy", v, env[v])
		}
	}
	if env["NODE_USE_ENV_PROXY"] != "1" || strings.Contains(env["NO_PROXY"], "github") {
		t.Errorf("NODE_USE_ENV_PROXY=%q NO_PROXY=%q", env["NODE_USE_ENV_PROXY"], env["NO_PROXY"])
	}
	bundle := filepath.Join(dir, bundleName(c.AgentDir))
	for _, v := range []string{"SSL_CERT_FILE", "NODE_EXTRA_CA_CERTS", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO", "PIP_CERT"} {
		if env[v] != bundle {
			t.Errorf("%s = %q, want the bundle", v, env[v])
		}
	}
	b, err := os.ReadFile(bundle)
	if err != nil || !bytes.Contains(b, cp.proxy.CAPEM()) || bytes.Contains(b, []byte("PRIVATE KEY")) {
		t.Errorf("the bundle lacks the CA or holds a key (%v)", err)
	}
	if pc := prepareBash(t, c, credEnviron()); pc.Notices != cp.proxy {
		t.Error("the bash tool's processes do not report the proxy's notices of refused certificates")
	}
	line, warn := cp.line()
	for _, want := range []string{"AGENT_EGRESS=open", "stand-ins for GH_TOKEN (api.github.com", "built-in", "CA SHA-256 " + cp.proxy.CAFingerprint(), "held in the clear", "FOO_TOKEN"} {
		if !strings.Contains(line, want) {
			t.Errorf("the start-up line lacks %q: %s", want, line)
		}
	}
	if warn || strings.Contains(line, testGHToken) || strings.Contains(line, standIn) || strings.Contains(line, testFooToken) {
		t.Error("the start-up line warns or holds a value")
	}
	enf, ok := cp.Enforcement()
	if !ok || enf.Addr != cp.proxy.Addr() || enf.Allowlist {
		t.Errorf("Enforcement() = %+v, %v", enf, ok)
	}
	// The view ${GH_TOKEN} expands with for what agent processes start.
	p, err := spawnpolicy.New(c.Policy, nil, credEnviron)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := p.Lookup("GH_TOKEN"); v != standIn {
		t.Error("the policy's view of GH_TOKEN is not the stand-in")
	}
}

func TestCredentialProxyFailsClosed(t *testing.T) {
	c := credConfig(t)
	// A bundle directory that cannot be made: a file is in the way.
	file := filepath.Join(t.TempDir(), "file")
	os.WriteFile(file, nil, 0o600)
	cp := startCredentialProxy(c, credEnviron(), redactor.New(c.Policy.SecretValues), nil, filepath.Join(file, "ca"))
	defer cp.Close()
	if cp.err == nil || cp.proxy != nil {
		t.Fatal("the proxy started without its CA bundle")
	}
	cp.apply(&c.Policy, &c.Sandbox)
	env := prepareBash(t, c, credEnviron()).Env
	if _, ok := env["GH_TOKEN"]; ok {
		t.Fatal("GH_TOKEN reaches agent processes although the proxy is not running")
	}
	if env["FOO_TOKEN"] != testFooToken {
		t.Error("the unbound FOO_TOKEN is affected")
	}
	if _, ok := env["HTTPS_PROXY"]; ok {
		t.Error("HTTPS_PROXY points at a proxy that is not running")
	}
	line, warn := cp.line()
	if !warn || !strings.Contains(line, "withheld from agent processes, never passed real: GH_TOKEN") {
		t.Errorf("start-up line %q (warn %v), want the withheld variable named", line, warn)
	}
}

func TestCredentialProxyOff(t *testing.T) {
	e := goodEnv()
	c, err := e.Parse(credEnviron())
	if err != nil {
		t.Fatal(err)
	}
	cp := startCredentialProxy(c, credEnviron(), redactor.New(nil), nil, t.TempDir())
	if cp.proxy != nil || cp.err != nil {
		t.Fatal("a proxy started with nothing bound and egress open")
	}
	if line, _ := cp.line(); !strings.Contains(line, "off") {
		t.Errorf("line %q", line)
	}
}

func TestDoctorCredentials(t *testing.T) {
	e := goodEnv()
	e.AgentDir = filepath.Join(t.TempDir(), "data")
	e.WorkspaceDir = t.TempDir()
	e.AgentSandbox = "off"
	e.ProcessEnvAllow = "GH_TOKEN,FOO_TOKEN"
	out, code := runDoctorIn(t, e, credEnviron(), func(context.Context, *spawnpolicy.Policy) error { return nil })
	if code != 0 {
		t.Fatalf("doctor exit code %d; output:\n%s", code, out)
	}
	for _, want := range []string{
		"Credentials (CREDENTIAL_HOSTS, AGENT_EGRESS=open)",
		"GH_TOKEN: agent processes get a stand-in; the proxy puts the real value into requests to (api.github.com",
		"warning: FOO_TOKEN is held in the clear",
		"proxy: answers on loopback",
		"GH_TOKEN stand-in: ghp_… 39 characters: letters, digits",
		"CA: ECDSA P-256",
		"✔ GH_TOKEN: a stand-in of 39 characters, not the real value",
		"✔ HTTPS_PROXY: the proxy",
		"✔ SSL_CERT_FILE: the CA bundle is readable",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q; output:\n%s", want, out)
		}
	}
	if strings.Contains(out, testGHToken) || strings.Contains(out, testFooToken) {
		t.Error("the doctor's output holds a value")
	}

	e.CredentialHosts = "OTHER_TOKEN=example.com"
	out, code = runDoctorIn(t, e, credEnviron(), func(context.Context, *spawnpolicy.Policy) error { return nil })
	if code != 1 || !strings.Contains(out, "CREDENTIAL_HOSTS: OTHER_TOKEN is not allowed") {
		t.Errorf("a binding of a variable that is not allowed: exit %d; output:\n%s", code, out)
	}
}

func TestStandInsDrawnBeforeStart(t *testing.T) {
	c := credConfig(t)
	drawStandIns(&c)
	early := c.Policy.StandIns["GH_TOKEN"]
	if early == "" || early == testGHToken {
		t.Fatal("no stand-in for GH_TOKEN before the proxy starts")
	}
	cp := startCredentialProxy(c, credEnviron(), redactor.New(c.Policy.SecretValues), nil, filepath.Join(t.TempDir(), "ca"))
	defer cp.Close()
	if cp.err != nil {
		t.Fatal(cp.err)
	}
	cp.apply(&c.Policy, &c.Sandbox)
	if got := prepareBash(t, c, credEnviron()).Env["GH_TOKEN"]; got != early {
		t.Error("agent processes get another stand-in than the one drawn before the proxy started")
	}
}

// reverse returns s backwards, as `rev` prints it.
func reverse(s string) string {
	b := []byte(s)
	slices.Reverse(b)
	return string(b)
}

// TestBinaryStandIn runs the bot with GH_TOKEN allowed: the start-up line
// names the binding, and what a bash call prints of GH_TOKEN, reversed past
// any redactor, is the stand-in's, never the real value's.
func TestBinaryStandIn(t *testing.T) {
	tg := telegramtest.New(t)
	command := `printf '%s\n' "$GH_TOKEN" | rev; printf 'proxy=%s\n' "$HTTPS_PROXY"; if [ -r "$SSL_CERT_FILE" ]; then echo bundle=readable; fi`
	oa := openaitest.New(t, openaitest.WithScript(
		openaitest.ToolCalls(openaitest.ToolCall{Name: "bash", Arguments: `{"command":` + strconv.Quote(command) + `}`}),
		openaitest.Text("done"),
	))
	agentDir, ws := t.TempDir(), t.TempDir()
	p := startBot(t, procEnv(tg, oa.URL(), agentDir, ws, "PROCESS_ENV_ALLOW=GH_TOKEN", "GH_TOKEN="+testGHToken))
	line := p.waitLog("Credential proxy:")
	if !strings.Contains(line, "stand-ins for GH_TOKEN (api.github.com") || !strings.Contains(line, "AGENT_EGRESS=open") {
		t.Errorf("start-up line: %s", line)
	}
	tg.SendText(procUser, procUser, "show me the token")
	waitMessage(t, tg, procUser, "done")
	// /status names the binding and the stand-in's shape, never a value.
	tg.SendText(procUser, procUser, "/status")
	waitMessage(t, tg, procUser, "Credential GH_TOKEN: a stand-in (ghp_… 39 characters")
	waitMessage(t, tg, procUser, "Egress: AGENT_EGRESS=open")
	var result string
	for _, body := range oa.AllBodies() {
		if bytes.Contains(body, []byte(testGHToken)) || bytes.Contains(body, []byte(reverse(testGHToken))) {
			t.Fatal("the model got the real token, or it reversed")
		}
		if bytes.Contains(body, []byte("bundle=readable")) {
			result = string(body)
		}
	}
	if result == "" {
		t.Fatal("no tool result with the bundle readable reached the model")
	}
	if !strings.Contains(result, reverse("ghp_")) || !strings.Contains(result, "proxy=http://127.0.0.1:") {
		t.Errorf("the tool result lacks the reversed stand-in or the proxy")
	}
	if strings.Contains(p.log(), testGHToken) {
		t.Error("the log holds the real token")
	}
	// Nothing the bot wrote holds a private key: its state, the
	// workspace, and the CA bundle's directory.
	for _, dir := range []string{agentDir, ws, caBundleDir()} {
		filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return nil
			}
			if b, err := os.ReadFile(path); err == nil && bytes.Contains(b, []byte("PRIVATE KEY")) {
				t.Errorf("%s holds a private key", path)
			}
			return nil
		})
	}
	if b, err := os.ReadFile(filepath.Join(caBundleDir(), bundleName(agentDir))); err != nil || !bytes.Contains(b, []byte("telegram-agent credential proxy CA")) {
		t.Errorf("the bot wrote no CA bundle (%v)", err)
	}
}

func TestAddSecretsLeavesStandInsOut(t *testing.T) {
	c := credConfig(t)
	drawStandIns(&c)
	standIn := c.Policy.StandIns["GH_TOKEN"]
	addSecrets(&c, []string{standIn, "mcp-server-secret-0042"})
	if slices.Contains(c.Policy.SecretValues, standIn) {
		t.Error("the stand-in became a secret value")
	}
	if !slices.Contains(c.Policy.SecretValues, "mcp-server-secret-0042") {
		t.Error("the MCP server's secret is not a secret value")
	}
	if err := c.Policy.Validate(); err != nil {
		t.Errorf("the options are invalid: %v", err)
	}
}

// TestDoctorEgressProbe runs the doctor with AGENT_EGRESS=allowlist: with a
// tier it proves a direct connection and a UDP datagram refused; with the
// sandbox off it warns that the allow-list is not enforced, and required
// is then a problem.
func TestDoctorEgressProbe(t *testing.T) {
	e := goodEnv()
	e.AgentDir = filepath.Join(t.TempDir(), "data")
	e.WorkspaceDir = t.TempDir()
	e.AgentEgress = "allowlist"
	noop := func(context.Context, *spawnpolicy.Policy) error { return nil }
	out, code := runDoctorIn(t, e, credEnviron(), noop)
	switch {
	case strings.Contains(out, "Egress allow-list: enforced"):
		for _, want := range []string{"✔ a direct TCP connection to a loopback port: refused", "✔ a UDP datagram: refused"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q; output:\n%s", want, out)
			}
		}
		if code != 0 {
			t.Errorf("doctor exit code %d; output:\n%s", code, out)
		}
	case strings.Contains(out, "Egress allow-list: not enforced"):
		t.Logf("no tier here: %s", out)
	default:
		t.Errorf("the doctor says nothing of the allow-list's enforcement; output:\n%s", out)
	}

	e.AgentSandbox, e.AgentEgress = "off", "allowlist"
	out, _ = runDoctorIn(t, e, credEnviron(), noop)
	if !strings.Contains(out, "warning: Egress allow-list: not enforced by the kernel, the agent sandbox is off") {
		t.Errorf("allowlist with the sandbox off is no warning; output:\n%s", out)
	}
	e.AgentEgress = "required"
	out, code = runDoctorIn(t, e, credEnviron(), noop)
	if code != 1 || !strings.Contains(out, "AGENT_EGRESS=required") {
		t.Errorf("required with the sandbox off: exit %d; output:\n%s", code, out)
	}
}

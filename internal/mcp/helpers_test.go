package mcp

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/logtest"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// Fake values the tests hand the policy, the configuration and the
// redactor. Failure messages never print them.
const (
	// inheritedSecret is OPENAI_API_KEY in the injected host environment.
	inheritedSecret = "sk-inherited-SECRET-0123456789"
	// explicitToken is GITHUB_TOKEN, passed on purpose to the fake server
	// through its env entry; it is not a configured secret.
	explicitToken = "ghp-explicit-TOKEN-0123456789"
	// configuredSecret is one of the SecretValues, inherited under an
	// innocent name and passed on purpose as SERVICE_PASSWORD.
	configuredSecret = "configured-SECRET-9876543210"
)

// testEnviron is the injected host environment of the tests' policies.
func testEnviron() map[string]string {
	return map[string]string{
		"PATH":           os.Getenv("PATH"),
		"HOME":           os.Getenv("HOME"),
		"LANG":           "C.UTF-8",
		"OPENAI_API_KEY": inheritedSecret,
		"INNOCENT_NAME":  configuredSecret,
		"KEEP_ME":        "kept-value",
		// The race runtime sleeps a second at exit unless told not to;
		// the fake server is this test binary.
		"GORACE": "atexit_sleep_ms=0",
	}
}

// testLookup is the host environment the configuration is expanded from.
func testLookup(name string) (string, bool) {
	v, ok := map[string]string{
		"GITHUB_TOKEN":     explicitToken,
		"SERVICE_PASSWORD": configuredSecret,
	}[name]
	return v, ok
}

// newPolicy builds a spawn policy with the default deny-list and hooks
// over the injected environment.
func newPolicy(t *testing.T, hooks ...spawnpolicy.Hook) *spawnpolicy.Policy {
	t.Helper()
	opts := spawnpolicy.DefaultOptions()
	opts.HardenHostProcess = false
	opts.SecretValues = []string{configuredSecret}
	opts.Hooks = hooks
	p, err := spawnpolicy.New(opts, slog.New(slog.DiscardHandler), testEnviron)
	if err != nil {
		t.Fatalf("spawnpolicy.New: %v", err)
	}
	return p
}

// testBinary is the path of the running test binary, which is also the
// fake server.
func testBinary(t *testing.T) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("os.Executable: %v", err)
	}
	return exe
}

// fakeServer configures the fake server under name, in mode with extra
// flags.
func fakeServer(t *testing.T, name string, flags ...string) ServerConfig {
	t.Helper()
	return ServerConfig{Name: name, Command: testBinary(t), Args: append([]string{fakeServerArg}, flags...)}
}

// harness is an agent over a faux provider with the MCP extension.
type harness struct {
	agent *agent.Agent
	ext   *Extension
	// faux is the provider, when it is a faux one.
	faux *agenttest.FauxProvider
	logs *logtest.Recorder
	// workspace is the agent's working directory.
	workspace string
}

// newHarness builds and starts an agent with the extension for cfg, over a
// faux provider. Its redactor knows only the configured secret.
func newHarness(t *testing.T, cfg Config, opts ...Option) *harness {
	t.Helper()
	return newFauxHarness(t, cfg, nil, opts...)
}

// newFauxHarness is newHarness with secrets added to the redactor.
func newFauxHarness(t *testing.T, cfg Config, secrets []string, opts ...Option) *harness {
	t.Helper()
	faux := agenttest.NewFauxProvider()
	h := startHarness(t, cfg, faux, secrets, opts...)
	h.faux = faux
	return h
}

// startHarness builds and starts an agent over provider with the extension
// for cfg. Its redactor knows the configured secret and secrets (the bot's
// adds the configuration's Secrets).
func startHarness(t *testing.T, cfg Config, provider agent.Provider, secrets []string, opts ...Option) *harness {
	t.Helper()
	return startHarnessIn(t, t.TempDir(), cfg, provider, secrets, opts...)
}

// startHarnessIn is startHarness with the workspace ws, for a configuration
// that names paths in it.
func startHarnessIn(t *testing.T, ws string, cfg Config, provider agent.Provider, secrets []string, opts ...Option) *harness {
	t.Helper()
	logs := logtest.New()
	logger := slog.New(logs)
	ext := New(cfg, append([]Option{WithLogger(logger), WithTempDir(t.TempDir())}, opts...)...)
	red := redactor.New(append([]string{configuredSecret}, secrets...))
	a, err := agent.New(provider, newPolicy(t), red,
		agent.WithWorkspace(ws), agent.WithExtensions(ext), agent.WithLogger(logger))
	if err != nil {
		t.Fatalf("agent.New: %v", err)
	}
	if err := a.Start(t.Context()); err != nil {
		t.Fatalf("agent.Start: %v", err)
	}
	// Discovery runs in the background; the tests that look at the tools
	// start once every server had its first try.
	if err := ext.FirstRound(t.Context()); err != nil {
		t.Fatalf("FirstRound: %v", err)
	}
	t.Cleanup(func() {
		a.Close()
		if err := ext.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return &harness{agent: a, ext: ext, logs: logs, workspace: ws}
}

// session opens the session id.
func (h *harness) session(t *testing.T, id string) *agent.Session {
	t.Helper()
	s, err := h.agent.Session(t.Context(), agent.SessionOptions{ID: id, Scope: "chat-" + id})
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	return s
}

// call runs one turn in which the model calls tool with args, and returns
// the tool's message as the session recorded it (redacted by the loop).
func (h *harness) call(t *testing.T, s *agent.Session, tool, args string) agent.Message {
	t.Helper()
	h.faux.Enqueue(agenttest.FauxToolCalls(agenttest.FauxCall(tool, args)), agenttest.FauxText("done"))
	if _, err := s.Prompt(context.WithoutCancel(t.Context()), []agent.Content{agent.Text("go")}, nil); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	msgs := s.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == agent.RoleTool {
			return msgs[i]
		}
	}
	t.Fatalf("no tool message after calling %s", tool)
	return agent.Message{}
}

// checkServerEnv checks the environment a server printed (out, parsed into
// vars) against the injected host environment and the configuration of
// configFile: deny-listed and secret-valued inherited variables are absent,
// the explicit GITHUB_TOKEN arrived, and the explicit configured secret came
// back redacted. No value is ever printed.
func checkServerEnv(t *testing.T, out string, vars map[string]string) {
	t.Helper()
	checkAbsent(t, "the env output", "the inherited OPENAI_API_KEY value", out, inheritedSecret)
	checkAbsent(t, "the env output", "the configured secret", out, configuredSecret)
	tests := []struct {
		name    string
		present bool
		want    string
	}{
		{name: "OPENAI_API_KEY"},                                      // deny-listed, inherited
		{name: "INNOCENT_NAME"},                                       // a secret value under an innocent name
		{name: "KEEP_ME", present: true, want: "kept-value"},          // inherited, harmless
		{name: "SERVICE_PASSWORD", present: true, want: "[REDACTED]"}, // explicit and secret: redacted by the loop
		{name: "GITHUB_TOKEN", present: true, want: explicitToken},    // explicit under a deny-listed name
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := vars[tt.name]
			if ok != tt.present {
				t.Fatalf("%s present = %v, want %v", tt.name, ok, tt.present)
			}
			if ok && v != tt.want {
				t.Errorf("%s does not have the expected value (not printed)", tt.name)
			}
		})
	}
}

// checkAbsent fails the test when text holds secret; it names what leaked,
// never the value or the text.
func checkAbsent(t *testing.T, where, what, text, secret string) {
	t.Helper()
	if strings.Contains(text, secret) {
		t.Errorf("%s contains %s (value and text not printed)", where, what)
	}
}

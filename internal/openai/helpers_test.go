package openai

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/hardening"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// testSecret is a fake secret value the tests feed the policy and the
// redactor; failure messages never print it.
const testSecret = "sk-test-SECRETVALUE-1234567890"

func TestMain(m *testing.M) {
	hardening.Apply(false, slog.New(slog.DiscardHandler))
	os.Exit(m.Run())
}

// newTestAgent builds and starts an agent over provider with a policy and
// a redactor that know testSecret.
func newTestAgent(t *testing.T, provider agent.Provider, opts ...agent.Option) *agent.Agent {
	t.Helper()
	popts := spawnpolicy.DefaultOptions()
	popts.HardenHostProcess = false
	popts.SecretValues = []string{testSecret}
	environ := func() map[string]string {
		return map[string]string{"PATH": os.Getenv("PATH"), "OPENAI_API_KEY": testSecret}
	}
	policy, err := spawnpolicy.New(popts, slog.New(slog.DiscardHandler), environ)
	if err != nil {
		t.Fatalf("spawnpolicy.New: %v", err)
	}
	base := []agent.Option{agent.WithWorkspace(t.TempDir()), agent.WithModel("test-model")}
	a, err := agent.New(provider, policy, redactor.New([]string{testSecret}), append(base, opts...)...)
	if err != nil {
		t.Fatalf("agent.New: %v", err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(a.Close)
	return a
}

// openSession opens a session or fails the test.
func openSession(t *testing.T, a *agent.Agent, opts agent.SessionOptions) *agent.Session {
	t.Helper()
	if opts.ID == "" {
		opts.ID = "chat-1"
	}
	s, err := a.Session(context.Background(), opts)
	if err != nil {
		t.Fatalf("Session: %v", err)
	}
	return s
}

// leaks reports whether s holds the test secret, without printing it.
func leaks(s string) bool { return strings.Contains(s, testSecret) }

// deltas collects streamed text from any goroutine.
type deltas struct {
	mu    sync.Mutex
	items []string
}

func (d *deltas) add(s string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.items = append(d.items, s)
}

func (d *deltas) all() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]string(nil), d.items...)
}

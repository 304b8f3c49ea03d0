package agent_test

import (
	"context"
	"encoding/json"
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

// testEnviron is the injected host environment of the tests' policies.
func testEnviron() map[string]string {
	return map[string]string{
		"PATH":           os.Getenv("PATH"),
		"HOME":           "/home/test",
		"LANG":           "C.UTF-8",
		"OPENAI_API_KEY": testSecret,
		"INNOCENT_NAME":  testSecret,
		"KEEP_ME":        "kept-value",
		"REMOVE_ME":      "remove-value",
	}
}

// newPolicy builds a spawn policy over the test environment.
func newPolicy(t *testing.T, hooks ...spawnpolicy.Hook) *spawnpolicy.Policy {
	t.Helper()
	opts := spawnpolicy.DefaultOptions()
	opts.HardenHostProcess = false
	opts.SecretValues = []string{testSecret}
	opts.Hooks = hooks
	p, err := spawnpolicy.New(opts, slog.New(slog.DiscardHandler), testEnviron)
	if err != nil {
		t.Fatalf("spawnpolicy.New: %v", err)
	}
	return p
}

// newTestAgent builds and starts an agent over provider with the test
// policy and a redactor that knows testSecret.
func newTestAgent(t *testing.T, provider agent.Provider, opts ...agent.Option) *agent.Agent {
	t.Helper()
	base := []agent.Option{agent.WithWorkspace(t.TempDir()), agent.WithModel("test-model")}
	return startAgent(t, provider, redactor.New([]string{testSecret}), append(base, opts...)...)
}

// startAgent builds and starts an agent over provider with the test policy
// and red, closed when the test ends.
func startAgent(t *testing.T, provider agent.Provider, red *redactor.Redactor, opts ...agent.Option) *agent.Agent {
	t.Helper()
	a, err := agent.New(provider, newPolicy(t), red, opts...)
	if err != nil {
		t.Fatalf("New: %v", err)
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

// recorder collects values from any goroutine.
type recorder[T any] struct {
	mu    sync.Mutex
	items []T
}

func (r *recorder[T]) add(v T) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.items = append(r.items, v)
}

func (r *recorder[T]) all() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), r.items...)
}

// eventLog records events.
type eventLog = recorder[agent.Event]

// kindsOf lists the kinds of events.
func kindsOf(events []agent.Event) []agent.EventKind {
	var out []agent.EventKind
	for _, ev := range events {
		out = append(out, ev.Kind)
	}
	return out
}

// joinDeltas returns events with every run of consecutive text deltas
// joined into one.
func joinDeltas(events []agent.Event) []agent.Event {
	var out []agent.Event
	for _, ev := range events {
		if n := len(out); n > 0 && ev.Kind == agent.EventTextDelta && out[n-1].Kind == agent.EventTextDelta {
			out[n-1].Text += ev.Text
			continue
		}
		out = append(out, ev)
	}
	return out
}

// funcExtension is a scripted extension.
type funcExtension struct {
	name     string
	activate func(ctx context.Context, api *agent.API) error
}

func (e *funcExtension) Name() string { return e.name }
func (e *funcExtension) Activate(ctx context.Context, api *agent.API) error {
	return e.activate(ctx, api)
}

// leaks reports whether s holds the test secret, without printing it.
func leaks(s string) bool { return strings.Contains(s, testSecret) }

// jsonLeaks reports whether v's JSON form holds the test secret.
func jsonLeaks(t *testing.T, v any) bool {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("marshal: %v", err)
	}
	return leaks(string(b))
}

// spawnRequest is a minimal bash spawn request.
func spawnRequest() spawnpolicy.Request {
	return spawnpolicy.Request{Purpose: spawnpolicy.BashTool, Command: "true"}
}

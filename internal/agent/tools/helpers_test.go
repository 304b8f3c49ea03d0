package tools_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// testSecret is a fake secret the tests feed the policy and the redactor.
// Failure messages name it, never print it.
const testSecret = "sk-tools-SECRET-0123456789abcdef"

// testEnviron is the injected host environment of the tests' policies.
func testEnviron() map[string]string {
	return map[string]string{
		"PATH":           os.Getenv("PATH"),
		"HOME":           "/home/tools-test",
		"LANG":           "C.UTF-8",
		"OPENAI_API_KEY": testSecret,
		"KEEP_ME":        "kept-value",
	}
}

// fixture is a started agent with one open session.
type fixture struct {
	agent     *agent.Agent
	session   *agent.Session
	faux      *agenttest.FauxProvider
	workspace string
}

// fixtureConfig says how to build a fixture.
type fixtureConfig struct {
	hooks    []spawnpolicy.Hook
	tools    []agent.Tool
	timeZone string
	// realEnviron makes the policy read the real process environment
	// instead of testEnviron.
	realEnviron bool
	opts        []agent.Option
	// notices are the policy's Options.Notices.
	notices spawnpolicy.Notices
}

// newFixture builds and starts an agent over a faux provider, a policy on
// the injected environment and a redactor that knows testSecret, and opens
// a session.
func newFixture(tb testing.TB, cfg fixtureConfig) *fixture {
	tb.Helper()
	opts := spawnpolicy.DefaultOptions()
	opts.HardenHostProcess = false
	opts.SecretValues = []string{testSecret}
	opts.Hooks = cfg.hooks
	opts.Notices = cfg.notices
	environ := testEnviron
	if cfg.realEnviron {
		environ = nil
	}
	policy, err := spawnpolicy.New(opts, slog.New(slog.DiscardHandler), environ)
	if err != nil {
		tb.Fatalf("spawnpolicy.New: %v", err)
	}
	ws := tb.TempDir()
	faux := agenttest.NewFauxProvider()
	aopts := append([]agent.Option{agent.WithWorkspace(ws), agent.WithModel("test-model"), agent.WithTools(cfg.tools...)}, cfg.opts...)
	a, err := agent.New(faux, policy, redactor.New([]string{testSecret}), aopts...)
	if err != nil {
		tb.Fatalf("agent.New: %v", err)
	}
	if err := a.Start(context.Background()); err != nil {
		tb.Fatalf("Start: %v", err)
	}
	tb.Cleanup(a.Close)
	s, err := a.Session(context.Background(), agent.SessionOptions{ID: "chat-1", Scope: "chat:1", TimeZone: cfg.timeZone})
	if err != nil {
		tb.Fatalf("Session: %v", err)
	}
	return &fixture{agent: a, session: s, faux: faux, workspace: ws}
}

// progressLog records progress reports; safe for concurrent use.
type progressLog struct {
	mu      sync.Mutex
	reports []agent.Result
}

func (p *progressLog) add(r agent.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.reports = append(p.reports, r)
}

func (p *progressLog) all() []agent.Result {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]agent.Result(nil), p.reports...)
}

// call runs tool directly in the fixture's session with args (a JSON
// object), outside a turn.
func (f *fixture) call(ctx context.Context, tb testing.TB, tool agent.Tool, args string, progress *progressLog) agent.Result {
	tb.Helper()
	c := &agent.Call{ID: "call-1", Arguments: json.RawMessage(args), Context: f.session.ToolContext()}
	if progress != nil {
		c.Progress = progress.add
	}
	res, err := tool.Execute(ctx, c)
	if err != nil {
		tb.Fatalf("Execute(%s): %v", args, err)
	}
	return res
}

// bashArgs returns the JSON arguments of a bash call.
func bashArgs(command string, timeout float64) string {
	m := map[string]any{"command": command}
	if timeout > 0 {
		m["timeout"] = timeout
	}
	b, _ := json.Marshal(m)
	return string(b)
}

// jsonArgs marshals m into a call's arguments.
func jsonArgs(m map[string]any) string {
	b, _ := json.Marshal(m)
	return string(b)
}

// processGone reports whether pid has exited (a zombie counts as gone),
// waiting up to d for it.
func processGone(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for {
		stat, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
		if err != nil {
			return true
		}
		// The state follows the command name in parentheses.
		if i := strings.LastIndexByte(string(stat), ')'); i >= 0 && strings.HasPrefix(string(stat[i+1:]), " Z") {
			return true
		}
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// readPID reads the pid a command wrote to path.
func readPID(tb testing.TB, path string) int {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatalf("reading the pid file: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		tb.Fatalf("parsing the pid file %q: %v", data, err)
	}
	return pid
}

// killOnCleanup kills pid, a process the test started, when the test ends.
func killOnCleanup(tb testing.TB, pid int) {
	tb.Cleanup(func() {
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
	})
}

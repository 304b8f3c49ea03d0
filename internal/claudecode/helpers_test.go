package claudecode_test

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/claudecode"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/sandbox"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// Fake secrets of the tests; failure messages never print them.
const (
	hostSecret = "sk-test-HOSTSECRET-0123456789"
	ghToken    = "ghp_TESTTOKEN0123456789abcdefABCD"
	oauthToken = "sk-ant-oat01-TESTOAUTH-0123456789"
)

// hostEnviron is the injected host environment.
func hostEnviron() map[string]string {
	return map[string]string{
		"PATH":               os.Getenv("PATH"),
		"HOME":               "/root",
		"LANG":               "C.UTF-8",
		"LC_ALL":             "C.UTF-8",
		"OPENAI_API_KEY":     hostSecret,
		"TELEGRAM_BOT_TOKEN": hostSecret,
		"GH_TOKEN":           ghToken,
		"SOMETHING_ELSE":     "visible",
	}
}

// setup says how a harness is built.
type setup struct {
	sandboxed bool
	// dir is reused (a restart) when not empty.
	dir         string
	command     string
	turnTimeout time.Duration
	extraEnv    map[string]string
	bridge      []string
	// tools are added to the built-in ones.
	tools []agent.Tool
}

// harness is a provider and an agent over it, with the bash tool.
type harness struct {
	dir, home, workspace string
	provider             *claudecode.Provider
	agent                *agent.Agent
	// policy and view are the agent's, for a second agent over them.
	policy *spawnpolicy.Policy
	view   *sandbox.View
}

func newHarness(t testing.TB, su setup) *harness {
	t.Helper()
	h := &harness{dir: su.dir}
	if h.dir == "" {
		h.dir = t.TempDir()
	}
	h.home = filepath.Join(h.dir, "claude-code")
	h.workspace = filepath.Join(h.dir, "workspace")
	if err := os.MkdirAll(h.workspace, 0o755); err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	popts := spawnpolicy.DefaultOptions()
	popts.HardenHostProcess = false
	popts.SecretValues = []string{hostSecret, ghToken, oauthToken}
	var view *sandbox.View
	if su.sandboxed {
		if sandbox.ABI() == 0 {
			t.Skip("the kernel has no Landlock: the sandboxed bash cannot run")
		}
		v := sandbox.View{Workspace: h.workspace, Temp: t.TempDir(), System: sandbox.SystemDirs(nil)}
		l, err := sandbox.NewLauncher(exe, v)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close() })
		popts.Sandbox = l
		view = &v
	}
	policy, err := spawnpolicy.New(popts, slog.New(slog.DiscardHandler), hostEnviron)
	if err != nil {
		t.Fatal(err)
	}
	command := su.command
	if command == "" {
		command = exe
	}
	bridge := su.bridge
	if bridge == nil {
		bridge = []string{exe, claudecode.BridgeCommand}
	}
	cfg := claudecode.Config{Command: command, Home: h.home, Socket: filepath.Join(h.dir, "bridge.sock"),
		Bridge: bridge, Workspace: h.workspace, Environ: hostEnviron, OAuthToken: oauthToken,
		TurnTimeout: su.turnTimeout}
	if su.extraEnv != nil {
		cfg = claudecode.WithExtraEnv(cfg, su.extraEnv)
	}
	h.policy, h.view = policy, view
	h.provider, err = claudecode.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.provider.Close() })
	h.agent, err = agent.New(h.provider, policy, redactor.New(popts.SecretValues),
		agent.WithWorkspace(h.workspace), agent.WithSessionDir(filepath.Join(h.dir, "sessions")),
		agent.WithModel("sonnet"), agent.WithDefaultTimeZone("Europe/Berlin"),
		agent.WithSystemPrompt(func(agent.SessionInfo) string { return "You are the test bot." }),
		agent.WithTools(append(tools.All(tools.WithView(view)), su.tools...)...))
	if err != nil {
		t.Fatal(err)
	}
	if err := h.agent.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.agent.Close)
	return h
}

// turn is what one prompt gave.
type turn struct {
	res    agent.TurnResult
	err    error
	deltas string
	events []agent.Event
}

// prompt runs one turn of session id.
func (h *harness) prompt(t testing.TB, ctx context.Context, id, text string) turn {
	t.Helper()
	s, err := h.agent.Session(ctx, agent.SessionOptions{ID: id, Scope: id})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var out turn
	out.res, out.err = s.Prompt(ctx, []agent.Content{agent.Text(text)}, func(ev agent.Event) {
		mu.Lock()
		defer mu.Unlock()
		out.events = append(out.events, ev)
		if ev.Kind == agent.EventTextDelta {
			out.deltas += ev.Text
		}
	})
	return out
}

// records reads what the fake claude runs recorded.
func (h *harness) records(t *testing.T) []fakeRecord {
	t.Helper()
	f, err := os.Open(filepath.Join(h.home, "records.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []fakeRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r fakeRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// flag returns the value after name in args ("" when absent).
func flag(args []string, name string) string {
	for i, a := range args {
		if a == name && i+1 < len(args) {
			return args[i+1]
		}
	}
	return ""
}

// holdsSecret reports whether s holds one of the tests' secrets.
func holdsSecret(s string) bool {
	return strings.Contains(s, hostSecret) || strings.Contains(s, ghToken)
}

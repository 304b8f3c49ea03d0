package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/logtest"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// fakeTools are the model's names of the fake server's tools.
var fakeTools = []string{
	"mcp__fake__crash", "mcp__fake__echo", "mcp__fake__env",
	"mcp__fake__fail", "mcp__fake__image", "mcp__fake__pid", "mcp__fake__stall",
}

// readLines returns the lines of a file the fake server appended to.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	return strings.Fields(string(b))
}

// realPath resolves symlinks, so working directories compare.
func realPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatalf("EvalSymlinks: %v", err)
	}
	return r
}

func TestDiscovery(t *testing.T) {
	tmp := t.TempDir()
	cwdLog := filepath.Join(t.TempDir(), "cwd.log")
	off := fakeServer(t, "off")
	off.Command = filepath.Join(tmp, "does-not-exist")
	off.Disabled = true
	cfg := Config{Servers: []ServerConfig{
		fakeServer(t, "broken", "-mode", "broken", "-message", "token "+configuredSecret),
		fakeServer(t, "fake", "-cwd-log", cwdLog),
		fakeServer(t, "hang", "-mode", "hang"),
		off,
	}}
	h := newHarness(t, cfg, WithDiscoveryTimeout(3*time.Second), WithTempDir(tmp))

	var names []string
	for _, spec := range h.agent.Tools() {
		names = append(names, spec.Name)
	}
	slices.Sort(names)
	if diff := cmp.Diff(fakeTools, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}

	t.Run("statuses", func(t *testing.T) {
		st := h.ext.Servers()
		got := make(map[string]ServerStatus, len(st))
		for _, s := range st {
			got[s.Name] = s
		}
		tests := []struct {
			name     string
			tools    int
			disabled bool
			errHas   []string
		}{
			{name: "broken", errHas: []string{"refusing to start", "token [REDACTED]"}},
			{name: "fake", tools: len(fakeTools)},
			{name: "hang", errHas: []string{"no answer within 3s"}},
			{name: "off", disabled: true},
		}
		for _, tt := range tests {
			t.Run(tt.name, func(t *testing.T) {
				s, ok := got[tt.name]
				if !ok {
					t.Fatalf("no status for %s", tt.name)
				}
				if s.Tools != tt.tools || s.Disabled != tt.disabled {
					t.Errorf("status = %d tools, disabled %v; want %d, %v", s.Tools, s.Disabled, tt.tools, tt.disabled)
				}
				if len(tt.errHas) == 0 {
					if s.Err != nil {
						t.Errorf("unexpected error: %v", s.Err)
					}
					return
				}
				if s.Err == nil {
					t.Fatal("no error")
				}
				checkAbsent(t, "the status error", "the configured secret", s.Err.Error(), configuredSecret)
				for _, want := range tt.errHas {
					if !strings.Contains(s.Err.Error(), want) {
						t.Errorf("error lacks %q: %s", want, s.Err)
					}
				}
			})
		}
	})

	t.Run("logs", func(t *testing.T) {
		logs := h.logs.Text()
		checkAbsent(t, "the log", "the configured secret", logs, configuredSecret)
		for _, want := range []string{"server unavailable", "server=broken", "line=fake server ready"} {
			if !strings.Contains(logs, want) {
				t.Errorf("the log lacks %q", want)
			}
		}
	})

	t.Run("temporary working directory", func(t *testing.T) {
		lines := readLines(t, cwdLog)
		if len(lines) != 1 {
			t.Fatalf("the fake server started %d times, want 1", len(lines))
		}
		dir := lines[0]
		if filepath.Dir(dir) != realPath(t, tmp) || !strings.HasPrefix(filepath.Base(dir), "mcp-discovery-") {
			t.Errorf("discovery ran in %s, want a mcp-discovery-* folder in %s", dir, tmp)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the discovery folder was not removed: %v", err)
		}
	})

	t.Run("schema", func(t *testing.T) {
		for _, spec := range h.agent.Tools() {
			if spec.Name != "mcp__fake__echo" {
				continue
			}
			if spec.Description != "Echoes its text." {
				t.Errorf("description = %q", spec.Description)
			}
			var schema struct {
				Type       string                     `json:"type"`
				Properties map[string]json.RawMessage `json:"properties"`
				Required   []string                   `json:"required"`
			}
			if err := json.Unmarshal(spec.Parameters, &schema); err != nil {
				t.Fatalf("parameters: %v", err)
			}
			if schema.Type != "object" || schema.Properties["text"] == nil || !slices.Contains(schema.Required, "text") {
				t.Errorf("parameters = %s", spec.Parameters)
			}
		}
	})
}

// TestDiscoveryIsConcurrent checks that the servers are discovered at the
// same time: each fake server answers only once all of them have started,
// so one discovered after another would time out and lose its tools.
func TestDiscoveryIsConcurrent(t *testing.T) {
	barrier := t.TempDir()
	var cfg Config
	var want []string
	for _, name := range []string{"one", "two", "three"} {
		cfg.Servers = append(cfg.Servers, fakeServer(t, name, "-barrier", barrier, "-barrier-count", "3"))
		want = append(want, "mcp__"+name+"__pid")
	}
	// The discovery timeout is only a guard against a hang.
	h := newHarness(t, cfg, WithDiscoveryTimeout(30*time.Second))
	var got []string
	for _, spec := range h.agent.Tools() {
		if strings.HasSuffix(spec.Name, "__pid") {
			got = append(got, spec.Name)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("discovered pid tools (-want +got):\n%s", diff)
	}
	for _, st := range h.ext.Servers() {
		if st.Err != nil {
			t.Errorf("server %s: %v", st.Name, st.Err)
		}
	}
}

func TestNoServers(t *testing.T) {
	h := newHarness(t, Config{})
	if n := len(h.agent.Tools()); n != 0 {
		t.Errorf("%d tools, want none", n)
	}
	if st := h.ext.Servers(); len(st) != 0 {
		t.Errorf("Servers() = %v, want none", st)
	}
}

// configFile loads an inline MCP configuration for the fake server.
func configFile(t *testing.T, flags ...string) Config {
	t.Helper()
	args, err := json.Marshal(append([]string{fakeServerArg}, flags...))
	if err != nil {
		t.Fatal(err)
	}
	body := `{"mcpServers": {"fake": {"command": ` + strconv.Quote(testBinary(t)) + `, "args": ` + string(args) + `,
		"env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}", "SERVICE_PASSWORD": "${SERVICE_PASSWORD}"}}}}`
	cfg, err := Load(body, testLookup, []string{inheritedSecret})
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	return cfg
}

func TestSessionEnvironment(t *testing.T) {
	cwdLog := filepath.Join(t.TempDir(), "cwd.log")
	h := newHarness(t, configFile(t, "-cwd-log", cwdLog))
	s := h.session(t, "env")
	msg := h.call(t, s, "mcp__fake__env", `{}`)
	if msg.IsError {
		t.Fatalf("env failed: %s", agent.TextOf(msg.Content))
	}
	out := agent.TextOf(msg.Content)
	vars := make(map[string]string)
	for _, line := range strings.Split(out, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			vars[k] = v
		}
	}
	checkServerEnv(t, out, vars)
	t.Run("session variables", func(t *testing.T) {
		if _, ok := vars["TZ"]; ok && s.TimeZone() == "" {
			t.Error("TZ set though the session has no zone")
		}
	})
	t.Run("next request", func(t *testing.T) {
		reqs := h.faux.Requests()
		b, err := json.Marshal(reqs[len(reqs)-1].Messages)
		if err != nil {
			t.Fatal(err)
		}
		checkAbsent(t, "the next model request", "the configured secret", string(b), configuredSecret)
		checkAbsent(t, "the next model request", "the inherited secret", string(b), inheritedSecret)
	})
	t.Run("working directories", func(t *testing.T) {
		lines := readLines(t, cwdLog)
		if len(lines) != 2 {
			t.Fatalf("the fake server started %d times, want 2 (discovery, session)", len(lines))
		}
		if lines[0] == lines[1] {
			t.Error("discovery and the session ran in the same directory")
		}
		if lines[1] != realPath(t, h.workspace) {
			t.Errorf("the session's server ran in %s, want the workspace %s", lines[1], h.workspace)
		}
	})
}

func TestResults(t *testing.T) {
	h := newHarness(t, Config{Servers: []ServerConfig{fakeServer(t, "fake")}})
	s := h.session(t, "results")
	tests := []struct {
		name    string
		tool    string
		args    string
		want    []agent.Content
		isError bool
	}{
		{name: "text", tool: "mcp__fake__echo", args: `{"text":"hello"}`, want: []agent.Content{agent.Text("hello")}},
		{name: "image", tool: "mcp__fake__image", args: `{}`, want: []agent.Content{agent.Text("an image:"), agent.Image("image/png", sanitizedFakePNG(t))}},
		{name: "isError", tool: "mcp__fake__fail", args: `{}`, want: []agent.Content{agent.Text("it went wrong")}, isError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			msg := h.call(t, s, tt.tool, tt.args)
			if msg.IsError != tt.isError {
				t.Errorf("IsError = %v, want %v", msg.IsError, tt.isError)
			}
			if diff := cmp.Diff(tt.want, msg.Content); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
		})
	}
}

// pidOf calls the fake server's pid tool and returns the process id.
func pidOf(t *testing.T, h *harness, s *agent.Session) int {
	t.Helper()
	msg := h.call(t, s, "mcp__fake__pid", `{}`)
	if msg.IsError {
		t.Fatalf("pid failed: %s", agent.TextOf(msg.Content))
	}
	pid, err := strconv.Atoi(agent.TextOf(msg.Content))
	if err != nil {
		t.Fatalf("pid: %v", err)
	}
	return pid
}

func TestCrashRestarts(t *testing.T) {
	h := newHarness(t, Config{Servers: []ServerConfig{fakeServer(t, "fake")}})
	s := h.session(t, "crash")
	first := pidOf(t, h, s)
	msg := h.call(t, s, "mcp__fake__crash", `{}`)
	text := agent.TextOf(msg.Content)
	if !msg.IsError {
		t.Fatalf("a crash is not an error result: %s", text)
	}
	for _, want := range []string{`MCP server "fake"`, "the server exited", "crashing on purpose"} {
		if !strings.Contains(text, want) {
			t.Errorf("the error lacks %q: %s", want, text)
		}
	}
	second := pidOf(t, h, s)
	if second == first {
		t.Errorf("the server was not restarted (pid %d)", second)
	}
	if !strings.Contains(h.logs.Text(), "restarting") {
		t.Error("the restart was not logged")
	}
}

// spawnHook is an extension with a process_spawn handler.
type spawnHook struct {
	fn func(ev *agent.ProcessSpawnEvent) error
}

func (s spawnHook) Name() string { return "hook" }

func (s spawnHook) Activate(_ context.Context, api *agent.API) error {
	api.OnProcessSpawn(func(_ context.Context, ev *agent.ProcessSpawnEvent) error { return s.fn(ev) })
	return nil
}

func TestSessionSpawnGoesThroughExtensions(t *testing.T) {
	fail := false
	hook := spawnHook{fn: func(ev *agent.ProcessSpawnEvent) error {
		if ev.Context.Purpose != spawnpolicy.MCPServer || ev.Context.Origin != "fake" {
			return errors.New("unexpected purpose or origin")
		}
		if fail {
			return errors.New("no MCP servers today")
		}
		ev.Context.Env["SPAWN_SESSION"] = ev.Context.SessionID
		return nil
	}}
	ext := New(Config{Servers: []ServerConfig{fakeServer(t, "fake")}}, WithTempDir(t.TempDir()))
	faux := agenttest.NewFauxProvider()
	a, err := agent.New(faux, newPolicy(t), nil, agent.WithWorkspace(t.TempDir()), agent.WithExtensions(ext, hook))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := ext.FirstRound(t.Context()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close(); _ = ext.Close() })
	h := &harness{agent: a, ext: ext, faux: faux, logs: logtest.New()}

	s := h.session(t, "hooked")
	out := agent.TextOf(h.call(t, s, "mcp__fake__env", `{}`).Content)
	if !strings.Contains(out, "SPAWN_SESSION=hooked") {
		t.Error("the process_spawn handler's variable did not arrive")
	}
	fail = true
	s2 := h.session(t, "refused")
	msg := h.call(t, s2, "mcp__fake__pid", `{}`)
	if text := agent.TextOf(msg.Content); !msg.IsError || !strings.Contains(text, "no MCP servers today") {
		t.Errorf("a refused spawn gave %v: %s", msg.IsError, text)
	}
}

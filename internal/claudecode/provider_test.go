package claudecode_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/asusertest"
	"github.com/volcanic/telegram-agent/internal/claudecode"
)

// TestBridgeRunsSandboxedBash has the fake claude call the bridge's bash:
// the call runs in the host through the sandbox (no_new_privs is set, which
// only the launcher does), its result comes back to claude redacted, the
// text streams, the call shows as tool events, and claude's environment is
// exactly the allow-list.
func TestBridgeRunsSandboxedBash(t *testing.T) {
	h := newHarness(t, setup{sandboxed: true})
	if err := os.WriteFile(filepath.Join(h.workspace, "secret.txt"), []byte(hostSecret+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := h.prompt(t, t.Context(), "chat-1", "bash: cat secret.txt; grep NoNewPrivs /proc/self/status")
	if got.err != nil {
		t.Fatalf("Prompt: %v", got.err)
	}
	recs := h.records(t)
	if len(recs) != 1 {
		t.Fatalf("%d claude runs, want 1", len(recs))
	}
	rec := recs[0]
	if holdsSecret(rec.Result) || holdsSecret(got.res.Text) || holdsSecret(got.deltas) {
		t.Error("the secret leaked back to claude or into the answer")
	}
	if !strings.Contains(rec.Result, "[REDACTED]") || !strings.Contains(rec.Result, "NoNewPrivs:\t1") {
		t.Errorf("the bridge's result %q lacks the redacted secret or the sandbox's no_new_privs", rec.Result)
	}
	if want := "The output: " + rec.Result; got.res.Text != want {
		t.Errorf("answer %q, want %q", got.res.Text, want)
	}
	if want := "Running it.The output: " + rec.Result; got.deltas != want {
		t.Errorf("streamed %q, want %q", got.deltas, want)
	}
	// The usage carries the plan's window claude reported in the turn, for
	// the usage log.
	wantUsage := agent.Usage{PromptTokens: 130, CompletionTokens: 5, TotalTokens: 135, CachedTokens: 100, CostUSD: 0.0125,
		Windows: []agent.PlanWindow{{Name: "five_hour", Status: "allowed", Utilization: 0.25, Resets: time.Unix(1893456000, 0)}}}
	if diff := cmp.Diff(wantUsage, got.res.Usage); diff != "" {
		t.Errorf("the turn's usage (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]claudecode.RateLimit{"five_hour": {Status: "allowed", Type: "five_hour", ResetsAt: 1893456000, Utilization: 0.25}}, h.provider.RateLimits()); diff != "" {
		t.Errorf("the plan's windows (-want +got):\n%s", diff)
	}
	var kinds []agent.EventKind
	for _, ev := range got.events {
		if ev.Kind == agent.EventToolStart || ev.Kind == agent.EventToolEnd {
			kinds = append(kinds, ev.Kind)
			if ev.ToolName != "bash" || ev.ToolCallID != "toolu_01" {
				t.Errorf("tool event for %q (%q), want bash (toolu_01)", ev.ToolName, ev.ToolCallID)
			}
		}
	}
	if diff := cmp.Diff([]agent.EventKind{agent.EventToolStart, agent.EventToolEnd}, kinds); diff != "" {
		t.Errorf("tool events (-want +got):\n%s", diff)
	}
	wantEnv := []string{
		"CLAUDE_CODE_OAUTH_TOKEN=" + oauthToken,
		"CLAUDE_CONFIG_DIR=" + filepath.Join(h.home, ".claude"),
		"DISABLE_AUTOUPDATER=1",
		"HOME=" + h.home,
		"LANG=C.UTF-8",
		"LC_ALL=C.UTF-8",
		"PATH=" + os.Getenv("PATH"),
		"TZ=Europe/Berlin",
	}
	env := slices.Sorted(slices.Values(rec.Env))
	if !slices.Equal(wantEnv, env) {
		var names []string
		for _, kv := range env {
			name, _, _ := strings.Cut(kv, "=")
			names = append(names, name)
		}
		t.Errorf("claude's environment has the variables %v, want exactly the allow-list", names)
	}
	for _, name := range []string{"--tools", "--setting-sources"} {
		if i := slices.Index(rec.Args, name); i < 0 || rec.Args[i+1] != "" {
			t.Errorf("claude was not started with %s \"\"", name)
		}
	}
	if got, want := flag(rec.Args, "--allowedTools"), "mcp__host__bash,mcp__host__read,mcp__host__write,mcp__host__edit"; got != want {
		t.Errorf("--allowedTools %q, want %q", got, want)
	}
	for _, name := range []string{"--strict-mcp-config", "--disable-slash-commands", "--include-partial-messages", "--verbose"} {
		if !slices.Contains(rec.Args, name) {
			t.Errorf("claude was not started with %s", name)
		}
	}
	if got := flag(rec.Args, "--permission-mode"); got != "dontAsk" {
		t.Errorf("--permission-mode %q, want dontAsk", got)
	}
	if got := flag(rec.Args, "--model"); got != "sonnet" {
		t.Errorf("--model %q, want sonnet", got)
	}
	msgs := h.agentMessages(t, "chat-1")
	if diff := cmp.Diff([]agent.Role{agent.RoleUser, agent.RoleAssistant, agent.RoleTool, agent.RoleAssistant}, msgs); diff != "" {
		t.Errorf("the session's history (-want +got):\n%s", diff)
	}
	if entries, _ := filepath.Glob(filepath.Join(h.home, "mcp-*.json")); len(entries) != 0 {
		t.Errorf("the turn's MCP config files are left behind: %v", entries)
	}
}

// agentMessages lists the roles of session id's history.
func (h *harness) agentMessages(t *testing.T, id string) []agent.Role {
	t.Helper()
	s, err := h.agent.Session(t.Context(), agent.SessionOptions{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	var roles []agent.Role
	for _, m := range s.Messages() {
		roles = append(roles, m.Role)
	}
	return roles
}

// TestInitFailsClosed aborts the turn when claude's init event shows a
// native tool, the bridge not connected, or an API key in use, or when
// claude answers without one.
func TestInitFailsClosed(t *testing.T) {
	h := newHarness(t, setup{})
	for _, prompt := range []string{"native tool", "apikey in use", "nobridge", "noinit answer"} {
		t.Run(prompt, func(t *testing.T) {
			got := h.prompt(t, t.Context(), "chat-"+strings.Fields(prompt)[0], prompt)
			if !errors.Is(got.err, claudecode.ErrUnsafeInit) {
				t.Fatalf("Prompt: err = %v, want ErrUnsafeInit", got.err)
			}
			if got.deltas != "" {
				t.Errorf("an aborted turn streamed %q", got.deltas)
			}
		})
	}
}

// TestSessions checks --session-id first and --resume after, across a
// restart; a new session of the host (/new) gets a new claude session, and
// one claude no longer has starts fresh and says so.
func TestSessions(t *testing.T) {
	dir := t.TempDir()
	h := newHarness(t, setup{dir: dir})
	want := []string{"turn 1: one", "turn 2: two"}
	for i, text := range []string{"one", "two"} {
		got := h.prompt(t, t.Context(), "chat-1", text)
		if got.err != nil || got.res.Text != want[i] {
			t.Fatalf("turn %d: %q, %v; want %q", i+1, got.res.Text, got.err, want[i])
		}
	}
	h.agent.Close()
	h.provider.Close()
	stale := filepath.Join(h.home, "mcp-0123456789abcdef.json")
	if err := os.WriteFile(stale, []byte(`{}`), 0o600); err != nil {
		t.Fatal(err)
	}
	h = newHarness(t, setup{dir: dir})
	if _, err := os.Stat(stale); err == nil {
		t.Error("a killed run's MCP config file survived the restart")
	}
	if got := h.prompt(t, t.Context(), "chat-1", "three"); got.err != nil || got.res.Text != "turn 3: three" {
		t.Fatalf("after a restart: %q, %v; want the session resumed", got.res.Text, got.err)
	}
	if got := h.prompt(t, t.Context(), "chat-1.new", "four"); got.err != nil || got.res.Text != "turn 1: four" {
		t.Fatalf("a new session: %q, %v; want a fresh one", got.res.Text, got.err)
	}
	recs := h.records(t)
	first := flag(recs[0].Args, "--session-id")
	var got [][2]string
	for _, r := range recs {
		got = append(got, [2]string{flag(r.Args, "--session-id"), flag(r.Args, "--resume")})
	}
	fresh := got[3][0]
	if diff := cmp.Diff([][2]string{{first, ""}, {"", first}, {"", first}, {fresh, ""}}, got); diff != "" || fresh == first || first == "" {
		t.Errorf("--session-id, --resume per run (-want +got):\n%s", diff)
	}

	if err := os.RemoveAll(filepath.Join(h.home, ".claude", "fake-sessions")); err != nil {
		t.Fatal(err)
	}
	lost := h.prompt(t, t.Context(), "chat-1", "five")
	if lost.err != nil || !strings.HasPrefix(lost.res.Text, "(Claude Code no longer had this conversation") || !strings.HasSuffix(lost.res.Text, "turn 1: five") {
		t.Fatalf("a lost session: %q, %v; want a fresh one, said so", lost.res.Text, lost.err)
	}
	if !strings.HasPrefix(lost.deltas, "(Claude Code no longer had") {
		t.Errorf("the chat was not told that the session starts fresh: %q", lost.deltas)
	}
	if again := h.prompt(t, t.Context(), "chat-1", "six"); again.err != nil || again.res.Text != "turn 2: six" {
		t.Errorf("after a fresh start: %q, %v; want the fresh session resumed", again.res.Text, again.err)
	}
}

// TestStopAndTimeout ends claude's whole process group on /stop (the
// turn's context cancelled) and at the turn timeout.
func TestStopAndTimeout(t *testing.T) {
	for _, name := range []string{"stop", "timeout"} {
		t.Run(name, func(t *testing.T) {
			su := setup{}
			if name == "timeout" {
				su.turnTimeout = 2 * time.Second
			}
			h := newHarness(t, su)
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			done := make(chan turn, 1)
			go func() { done <- h.prompt(t, ctx, "chat-1", "sleep") }()
			pids := waitPids(t, filepath.Join(h.home, "sleep.pid"))
			if name == "stop" {
				cancel()
			}
			got := <-done
			want := context.Canceled
			if name == "timeout" {
				want = claudecode.ErrTurnTimeout
			}
			if !errors.Is(got.err, want) {
				t.Fatalf("Prompt: err = %v, want %v", got.err, want)
			}
			for _, pid := range pids {
				deadline := time.Now().Add(5 * time.Second)
				for asusertest.Alive(pid) && time.Now().Before(deadline) {
					time.Sleep(10 * time.Millisecond)
				}
				if asusertest.Alive(pid) {
					t.Errorf("claude's process %d outlived the turn", pid)
				}
			}
		})
	}
}

// waitPids waits for the fake's pid file and returns its pids.
func waitPids(t *testing.T, path string) []int {
	t.Helper()
	for range 1000 {
		data, err := os.ReadFile(path)
		if err == nil {
			var pids []int
			for _, f := range strings.Fields(string(data)) {
				n, _ := strconv.Atoi(f)
				pids = append(pids, n)
			}
			return pids
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("the fake claude never started sleeping")
	return nil
}

// TestErrorKinds names each failure by its kind, never with claude's own
// output.
func TestErrorKinds(t *testing.T) {
	h := newHarness(t, setup{})
	missing := newHarness(t, setup{command: filepath.Join(t.TempDir(), "claude")})
	cases := []struct {
		name   string
		h      *harness
		prompt string
		old    bool
		is     func(error) bool
	}{
		{"not logged in", h, "notloggedin", false, func(err error) bool { return errors.Is(err, claudecode.ErrNotLoggedIn) }},
		{"plan limit", h, "limit", false, func(err error) bool {
			var pl *claudecode.PlanLimitError
			return errors.As(err, &pl) && pl.Resets.Equal(time.Unix(1893456000, 0)) && pl.Window == "five_hour"
		}},
		{"CLI missing", missing, "hello", false, func(err error) bool { return errors.Is(err, claudecode.ErrCLIMissing) }},
		{"CLI too old", h, "hello", true, func(err error) bool { return errors.Is(err, claudecode.ErrCLITooOld) }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			marker := filepath.Join(c.h.workspace, "fake-claude-old")
			if c.old {
				if err := os.WriteFile(marker, nil, 0o644); err != nil {
					t.Fatal(err)
				}
				defer os.Remove(marker)
			}
			got := c.h.prompt(t, t.Context(), "chat-"+strings.ReplaceAll(c.name, " ", "-"), c.prompt)
			if !c.is(got.err) {
				t.Fatalf("Prompt: err = %v, want the %s kind", got.err, c.name)
			}
			for _, raw := range []string{"Please run /login", "unknown option", "5-hour limit reached"} {
				if strings.Contains(got.err.Error(), raw) {
					t.Errorf("the error repeats claude's output %q", raw)
				}
			}
		})
	}
}

// TestOneClaudeAtATime runs turns of three chats at once: their claude
// processes run one after another.
func TestOneClaudeAtATime(t *testing.T) {
	h := newHarness(t, setup{})
	var running, most int
	var mu sync.Mutex
	finished := make(chan struct{})
	cfgWatch := func() {
		for {
			select {
			case <-finished:
				return
			default:
			}
			entries, _ := filepath.Glob(filepath.Join(h.home, "mcp-*.json"))
			mu.Lock()
			running = len(entries)
			most = max(most, running)
			mu.Unlock()
			time.Sleep(2 * time.Millisecond)
		}
	}
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Go(func() {
			if got := h.prompt(t, t.Context(), "chat-"+strconv.Itoa(i), "bash: sleep 0.2"); got.err != nil {
				t.Errorf("Prompt: %v", got.err)
			}
		})
	}
	go func() { wg.Wait(); close(finished) }()
	cfgWatch()
	if most != 1 {
		t.Errorf("%d claude runs at once, want 1", most)
	}
}

// TestBridgeRefusesStrangers connects to the bridge socket as a process
// that is not the turn's bridge: a wrong secret gets nothing, the running
// turn's secret gets the tools, and once the turn ended it gets nothing.
func TestBridgeRefusesStrangers(t *testing.T) {
	h := newHarness(t, setup{})
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan turn, 1)
	go func() { done <- h.prompt(t, ctx, "chat-1", "sleep") }()
	waitPids(t, filepath.Join(h.home, "sleep.pid"))
	configs, _ := filepath.Glob(filepath.Join(h.home, "mcp-*.json"))
	if len(configs) != 1 {
		t.Fatalf("%d MCP config files, want 1", len(configs))
	}
	fi, err := os.Stat(configs[0])
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the MCP config file: %v, mode %v; want 0600", err, fi.Mode().Perm())
	}
	data, _ := os.ReadFile(configs[0])
	var cfg struct {
		Bridge struct{ Socket, Secret string } `json:"telegramBotBridge"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil || cfg.Bridge.Secret == "" {
		t.Fatalf("the MCP config file has no bridge secret: %v", err)
	}
	sock := filepath.Join(h.dir, "bridge.sock")
	if answer := rawAsk(t, sock, `{"secret":"0000","op":"tools"}`); answer != "" {
		t.Errorf("a wrong secret got an answer of %d bytes", len(answer))
	}
	if answer := rawAsk(t, sock, `{"secret":"`+cfg.Bridge.Secret+`","op":"tools"}`); !strings.Contains(answer, `"bash"`) {
		t.Errorf("the turn's secret did not get the tools: %q", answer)
	}
	cancel()
	<-done
	if answer := rawAsk(t, sock, `{"secret":"`+cfg.Bridge.Secret+`","op":"call","name":"bash","arguments":{"command":"true"}}`); answer != "" {
		t.Errorf("an ended turn's secret got an answer of %d bytes", len(answer))
	}
}

// rawAsk sends one request line to the bridge socket and returns the
// answer ("" when the bot answers nothing).
func rawAsk(t *testing.T, sock, line string) string {
	t.Helper()
	conn, err := net.Dial("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := conn.Write([]byte(line + "\n")); err != nil {
		t.Fatal(err)
	}
	data, _ := io.ReadAll(conn)
	return string(data)
}

// TestProbe runs the doctor's probes against the fake claude.
func TestProbe(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	got, err := claudecode.Probe(t.Context(), exe, t.TempDir(), hostEnviron(), oauthToken)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(claudecode.Status{Version: "2.1.197", LoggedIn: true, AuthMethod: "claude.ai"}, got); diff != "" {
		t.Errorf("Probe (-want +got):\n%s", diff)
	}
	if _, err := claudecode.Probe(t.Context(), filepath.Join(t.TempDir(), "claude"), t.TempDir(), hostEnviron(), ""); !errors.Is(err, claudecode.ErrCLIMissing) {
		t.Errorf("Probe of a missing claude: err = %v, want ErrCLIMissing", err)
	}
	for _, c := range []struct {
		v    string
		want bool
	}{{"2.1.197", false}, {"2.1.198", false}, {"2.0.99", true}, {"10.0.0", false}, {"garbage", true}} {
		if got := claudecode.OlderThan(c.v, "2.1.197"); got != c.want {
			t.Errorf("OlderThan(%q) = %v, want %v", c.v, got, c.want)
		}
	}
}

// TestSummaryRequest runs a request without tools (a compaction summary)
// once, without a session, the bridge or any tool.
func TestSummaryRequest(t *testing.T) {
	h := newHarness(t, setup{})
	req := agent.Request{Model: "sonnet", System: "Summarise.", Messages: []agent.Message{
		{Role: agent.RoleUser, Content: []agent.Content{agent.Text("hello")}},
		{Role: agent.RoleAssistant, Content: []agent.Content{agent.Text("hi there")}},
	}}
	var streamed strings.Builder
	resp, err := h.provider.Complete(t.Context(), req, func(s string) { streamed.WriteString(s) })
	if err != nil {
		t.Fatalf("Complete: %v", err)
	}
	if want := "turn 0: user: hello\n\nassistant: hi there\n\n"; resp.Text != want || streamed.String() != want {
		t.Errorf("the summary %q (streamed %q), want %q", resp.Text, streamed.String(), want)
	}
	rec := h.records(t)[0]
	if !slices.Contains(rec.Args, "--no-session-persistence") || flag(rec.Args, "--session-id") != "" || flag(rec.Args, "--resume") != "" ||
		flag(rec.Args, "--allowedTools") != "" {
		t.Errorf("a summary ran with a session or tools: %q", rec.Args)
	}
}

// TestImagePrompt hands an image of the user's message to claude as an
// image block of the stream-json user message.
func TestImagePrompt(t *testing.T) {
	h := newHarness(t, setup{})
	s, err := h.agent.Session(t.Context(), agent.SessionOptions{ID: "chat-1"})
	if err != nil {
		t.Fatal(err)
	}
	png := []byte("\x89PNG\r\n\x1a\nnot really a picture")
	if _, err := s.Prompt(t.Context(), []agent.Content{agent.Text("what is this?"), agent.Image("image/png", png)}, nil); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	want := []string{"text", "image image/png " + strconv.Itoa(len(png))}
	if diff := cmp.Diff(want, h.records(t)[0].Blocks); diff != "" {
		t.Errorf("the prompt's blocks (-want +got):\n%s", diff)
	}
}

// TestBridgeLeavesOutUnnamableTools offers claude no tool whose bridged
// name the Messages API would refuse (longer than 64 characters); the turn
// runs with the others.
func TestBridgeLeavesOutUnnamableTools(t *testing.T) {
	long := "mcp__server__" + strings.Repeat("x", 50)
	h := newHarness(t, setup{tools: []agent.Tool{agenttest.NewTool(long, "", nil)}})
	if got := h.prompt(t, t.Context(), "chat-1", "hello"); got.err != nil {
		t.Fatalf("Prompt: %v", got.err)
	}
	if got, want := flag(h.records(t)[0].Args, "--allowedTools"), "mcp__host__bash,mcp__host__read,mcp__host__write,mcp__host__edit"; got != want {
		t.Errorf("--allowedTools %q, want %q", got, want)
	}
}

// TestParallelToolUsesKeepTheirIDs has claude announce a read and a bash
// call in one message and run the bash first: each call's events carry
// its own tool use's id.
func TestParallelToolUsesKeepTheirIDs(t *testing.T) {
	h := newHarness(t, setup{})
	if err := os.WriteFile(filepath.Join(h.workspace, "a.txt"), []byte("a\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	got := h.prompt(t, t.Context(), "chat-1", "parallel")
	if got.err != nil {
		t.Fatalf("Prompt: %v", got.err)
	}
	var ids [][2]string
	for _, ev := range got.events {
		if ev.Kind == agent.EventToolStart {
			ids = append(ids, [2]string{ev.ToolName, ev.ToolCallID})
		}
	}
	if diff := cmp.Diff([][2]string{{"bash", "toolu_bash"}, {"read", "toolu_read"}}, ids); diff != "" {
		t.Errorf("the calls' ids (-want +got):\n%s", diff)
	}
}

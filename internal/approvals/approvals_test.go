package approvals

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// hangGuard bounds how long a test waits for something that should
// happen: a guard against a hang, never a measure of speed.
const hangGuard = 30 * time.Second

// fakeSecret is a secret value planted in commands; never a real one.
const fakeSecret = "sk-fake-approvals-0123456789"

// fakeAsker answers approval requests with a scripted decision, or, with
// block, waits until the request's context ends.
type fakeAsker struct {
	mu       sync.Mutex
	decision Decision
	err      error
	block    bool
	reqs     []Request
	asked    chan struct{}
}

func newFakeAsker(d Decision) *fakeAsker {
	return &fakeAsker{decision: d, asked: make(chan struct{}, 16)}
}

func (f *fakeAsker) Ask(ctx context.Context, req Request) (Decision, error) {
	f.mu.Lock()
	f.reqs = append(f.reqs, req)
	d, err, block := f.decision, f.err, f.block
	f.mu.Unlock()
	f.asked <- struct{}{}
	if block {
		<-ctx.Done()
		return Deny, ctx.Err()
	}
	return d, err
}

func (f *fakeAsker) requests() []Request {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Request(nil), f.reqs...)
}

// memoryStore keeps decisions in memory; failing makes AllowAlways fail.
type memoryStore struct {
	mu      sync.Mutex
	allowed map[string]bool
	failing bool
}

func newMemoryStore() *memoryStore { return &memoryStore{allowed: map[string]bool{}} }

func (m *memoryStore) AlwaysAllowed(_ context.Context, scope, rule string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.allowed[scope+"\x00"+rule]
}

func (m *memoryStore) AllowAlways(_ context.Context, scope, rule string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.failing {
		return errors.New("disk full")
	}
	m.allowed[scope+"\x00"+rule] = true
	return nil
}

// testChat is the front end the env's turns are prompted with: the fake
// asker asks and the memory store keeps the decisions, both of which the
// chat host does.
type testChat struct {
	*fakeAsker
	*memoryStore
}

// env is an agent with the real bash, read, write and edit tools, the
// approvals extension and a faux provider.
type env struct {
	provider  *agenttest.FauxProvider
	session   *agent.Session
	workspace string
	asker     *fakeAsker
	store     *memoryStore
	// front is what each turn is prompted with as its front end.
	front any
}

func newEnv(t *testing.T, asker *fakeAsker, store *memoryStore, opts ...Option) *env {
	t.Helper()
	return newEnvWith(t, asker, store, nil, opts...)
}

// newEnvWith is newEnv with more tools than the built-in ones.
func newEnvWith(t *testing.T, asker *fakeAsker, store *memoryStore, extra []agent.Tool, opts ...Option) *env {
	t.Helper()
	workspace := t.TempDir()
	popts := spawnpolicy.DefaultOptions()
	popts.HardenHostProcess = false
	popts.SecretValues = []string{fakeSecret}
	policy, err := spawnpolicy.New(popts, nil, func() map[string]string {
		return map[string]string{"PATH": "/usr/bin:/bin", "HOME": workspace}
	})
	if err != nil {
		t.Fatal(err)
	}
	ext := New(opts...)
	provider := agenttest.NewFauxProvider()
	a, err := agent.New(provider, policy, redactor.New(popts.SecretValues),
		agent.WithWorkspace(workspace),
		agent.WithSessionDir(t.TempDir()),
		agent.WithTools(append(tools.All(), extra...)...),
		agent.WithExtensions(ext))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	if err := a.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	s, err := a.Session(t.Context(), agent.SessionOptions{ID: "chat-1", Scope: "telegram:1"})
	if err != nil {
		t.Fatal(err)
	}
	return &env{provider: provider, session: s, workspace: workspace, asker: asker, store: store, front: testChat{asker, store}}
}

// call has the model make one tool call and returns its result, as the
// model sees it in the next request.
func (e *env) call(t *testing.T, ctx context.Context, tool string, args any) (string, error) {
	t.Helper()
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	e.provider.Enqueue(agenttest.FauxToolCalls(agenttest.FauxCall(tool, string(raw))), agenttest.FauxText("done"))
	_, err = e.session.Prompt(agent.WithFrontEnd(ctx, e.front), []agent.Content{agent.Text("go")}, nil)
	msgs := e.session.Messages()
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == agent.RoleTool {
			return agent.TextOf(msgs[i].Content), err
		}
	}
	t.Fatalf("no tool result in the session (prompt error: %v)", err)
	return "", err
}

// victim makes a folder with a file in the workspace, for rm -rf.
func (e *env) victim(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(e.workspace, "victim")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// TestDecisions runs a risky command through each answer.
func TestDecisions(t *testing.T) {
	tests := []struct {
		name       string
		decision   Decision
		wantRun    bool
		wantResult string
		wantStored bool
	}{
		{"deny", Deny, false, "Not run: the user denied: rm -rf victim (a recursive delete", false},
		{"allow once", AllowOnce, true, "", false},
		{"always in this chat", AllowAlways, true, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, newFakeAsker(tt.decision), newMemoryStore())
			dir := e.victim(t)
			got, err := e.call(t, t.Context(), "bash", map[string]string{"command": "rm -rf victim"})
			if err != nil {
				t.Fatal(err)
			}
			if exists(dir) == tt.wantRun {
				t.Errorf("after %s the folder exists: %v", tt.name, exists(dir))
			}
			if !strings.Contains(got, tt.wantResult) {
				t.Errorf("result %q does not contain %q", got, tt.wantResult)
			}
			want := []Request{{
				Scope: "telegram:1", SessionID: "chat-1", Tool: "bash", Command: "rm -rf victim",
				Rules: []Rule{Describe(RuleRecursiveDelete)}, Timeout: DefaultTimeout,
			}}
			if diff := cmp.Diff(want, e.asker.requests(), cmpIgnoreCallID); diff != "" {
				t.Errorf("requests (-want +got):\n%s", diff)
			}
			if stored := e.store.AlwaysAllowed(t.Context(), "telegram:1", RuleRecursiveDelete); stored != tt.wantStored {
				t.Errorf("decision stored: %v, want %v", stored, tt.wantStored)
			}
			// The next such call is asked about again, unless it was
			// allowed for good.
			e.victim(t)
			if _, err := e.call(t, t.Context(), "bash", map[string]string{"command": "rm -r victim"}); err != nil {
				t.Fatal(err)
			}
			wantAsks := 2
			if tt.wantStored {
				wantAsks = 1
			}
			if n := len(e.asker.requests()); n != wantAsks {
				t.Errorf("asked %d times, want %d", n, wantAsks)
			}
		})
	}
}

// cmpIgnoreCallID ignores the faux provider's call ids.
var cmpIgnoreCallID = cmp.Transformer("noCallID", func(r Request) Request { r.CallID = ""; return r })

// TestNotAsked checks that benign calls run without a question.
func TestNotAsked(t *testing.T) {
	e := newEnv(t, newFakeAsker(Deny), newMemoryStore())
	if got, err := e.call(t, t.Context(), "bash", map[string]string{"command": "echo hello > file.txt && rm file.txt && echo ok"}); err != nil || !strings.Contains(got, "ok") {
		t.Errorf("benign command: result %q, error %v", got, err)
	}
	if got, err := e.call(t, t.Context(), "write", map[string]string{"path": "notes/a.txt", "content": "x"}); err != nil || !strings.Contains(got, "Wrote") {
		t.Errorf("write in the workspace: result %q, error %v", got, err)
	}
	if n := len(e.asker.requests()); n != 0 {
		t.Errorf("asked %d times about benign calls", n)
	}
}

// TestWriteOutsideWorkspace checks that write and edit outside the
// workspace, directly or through a symbolic link, are asked about.
func TestWriteOutsideWorkspace(t *testing.T) {
	outside := t.TempDir()
	e := newEnv(t, newFakeAsker(Deny), newMemoryStore())
	if err := os.Symlink(outside, filepath.Join(e.workspace, "link")); err != nil {
		t.Fatal(err)
	}
	target := filepath.Join(outside, "x.txt")
	calls := []struct {
		tool string
		args map[string]string
	}{
		{"write", map[string]string{"path": target, "content": "x"}},
		{"write", map[string]string{"path": "../" + filepath.Base(outside) + "/x.txt", "content": "x"}},
		{"write", map[string]string{"path": "link/x.txt", "content": "x"}},
		{"edit", map[string]string{"path": target, "old_text": "a", "new_text": "b"}},
	}
	for _, c := range calls {
		got, err := e.call(t, t.Context(), c.tool, c.args)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(got, "the user denied") {
			t.Errorf("%s %s: result %q, want a denial", c.tool, c.args["path"], got)
		}
	}
	if exists(target) {
		t.Error("a denied write created its file")
	}
	if n := len(e.asker.requests()); n != len(calls) {
		t.Errorf("asked %d times, want %d", n, len(calls))
	}
	for _, r := range e.asker.requests() {
		if diff := cmp.Diff([]Rule{Describe(RuleWriteOutsideView)}, r.Rules); diff != "" {
			t.Errorf("rules (-want +got):\n%s", diff)
		}
	}
}

// TestWritableRoots checks that WithWritable widens the view.
func TestWritableRoots(t *testing.T) {
	extra := t.TempDir()
	e := newEnv(t, newFakeAsker(Deny), newMemoryStore(), WithWritable(extra))
	if got, err := e.call(t, t.Context(), "write", map[string]string{"path": filepath.Join(extra, "x.txt"), "content": "x"}); err != nil || !strings.Contains(got, "Wrote") {
		t.Errorf("write in a writable root: result %q, error %v", got, err)
	}
	if n := len(e.asker.requests()); n != 0 {
		t.Errorf("asked %d times about a writable root", n)
	}
}

// TestTimeout checks that no answer in time is a denial.
func TestTimeout(t *testing.T) {
	asker := newFakeAsker(AllowOnce)
	asker.block = true
	e := newEnv(t, asker, newMemoryStore(), WithTimeout(50*time.Millisecond))
	dir := e.victim(t)
	got, err := e.call(t, t.Context(), "bash", map[string]string{"command": "rm -rf victim"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "did not answer the approval request"; !strings.Contains(got, want) {
		t.Errorf("result %q does not contain %q", got, want)
	}
	if !exists(dir) {
		t.Error("the command ran after the approval timed out")
	}
}

// TestStopWhileWaiting checks that cancelling the turn while it waits
// ends the wait with a denial.
func TestStopWhileWaiting(t *testing.T) {
	asker := newFakeAsker(AllowOnce)
	asker.block = true
	e := newEnv(t, asker, newMemoryStore())
	dir := e.victim(t)
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	go func() {
		select {
		case <-asker.asked:
			cancel()
		case <-time.After(hangGuard):
		}
	}()
	got, err := e.call(t, ctx, "bash", map[string]string{"command": "rm -rf victim"})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("prompt error %v, want context.Canceled", err)
	}
	if want := "Not run: the turn was stopped"; !strings.Contains(got, want) {
		t.Errorf("result %q does not contain %q", got, want)
	}
	if !exists(dir) {
		t.Error("the command ran after the turn was stopped")
	}
}

// TestUnattended checks that a turn nobody watches denies without asking
// and says why.
func TestUnattended(t *testing.T) {
	e := newEnv(t, newFakeAsker(AllowOnce), newMemoryStore())
	dir := e.victim(t)
	got, err := e.call(t, Unattended(t.Context()), "bash", map[string]string{"command": "rm -rf victim"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "started by a scheduled job, so there was nobody to ask"; !strings.Contains(got, want) {
		t.Errorf("result %q does not contain %q", got, want)
	}
	if !exists(dir) {
		t.Error("an unattended turn ran a risky command")
	}
	if n := len(e.asker.requests()); n != 0 {
		t.Errorf("asked %d times in an unattended turn", n)
	}
	// A rule the chat allowed for good holds in its unattended turns too.
	if err := e.store.AllowAlways(t.Context(), "telegram:1", RuleRecursiveDelete); err != nil {
		t.Fatal(err)
	}
	if _, err := e.call(t, Unattended(t.Context()), "bash", map[string]string{"command": "rm -rf victim"}); err != nil {
		t.Fatal(err)
	}
	if exists(dir) {
		t.Error("an always-allowed rule was denied in an unattended turn")
	}
}

// TestNoAsker checks that a turn whose front end cannot ask (none, or one
// that only sends files) denies a risky call without asking, as a
// scheduled job's turn does, says why, and still runs a harmless one.
func TestNoAsker(t *testing.T) {
	tests := []struct {
		name  string
		front any
	}{
		{"no front end", nil},
		{"a front end that cannot ask", struct{ name string }{"files only"}},
		{"an asker without a decision store", newFakeAsker(AllowOnce)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, newFakeAsker(AllowOnce), newMemoryStore())
			e.front = tt.front
			dir := e.victim(t)
			got, err := e.call(t, t.Context(), "bash", map[string]string{"command": "rm -rf victim"})
			if err != nil {
				t.Fatal(err)
			}
			if want := "this turn has no chat to ask in, so there was nobody to ask"; !strings.Contains(got, want) {
				t.Errorf("result %q does not contain %q", got, want)
			}
			if !exists(dir) {
				t.Error("a turn with no chat to ask in ran a risky command")
			}
			if got, err := e.call(t, t.Context(), "bash", map[string]string{"command": "echo harmless"}); err != nil || !strings.Contains(got, "harmless") {
				t.Errorf("a harmless command: result %q, error %v", got, err)
			}
		})
	}
}

// TestAskFailure checks that a request that cannot be sent denies, and
// that a decision that cannot be kept still allows the call once.
func TestAskFailure(t *testing.T) {
	asker := newFakeAsker(AllowOnce)
	asker.err = errors.New("telegram is down")
	e := newEnv(t, asker, newMemoryStore())
	dir := e.victim(t)
	got, err := e.call(t, t.Context(), "bash", map[string]string{"command": "rm -rf victim"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "could not be sent (telegram is down)"; !strings.Contains(got, want) || !exists(dir) {
		t.Errorf("result %q (want %q), folder kept: %v", got, want, exists(dir))
	}

	store := newMemoryStore()
	store.failing = true
	e = newEnv(t, newFakeAsker(AllowAlways), store)
	dir = e.victim(t)
	if _, err := e.call(t, t.Context(), "bash", map[string]string{"command": "rm -rf victim"}); err != nil {
		t.Fatal(err)
	}
	if exists(dir) {
		t.Error("an allowed call did not run when its decision could not be kept")
	}
}

// TestModes checks APPROVAL_MODE off and all.
func TestModes(t *testing.T) {
	e := newEnv(t, newFakeAsker(Deny), newMemoryStore(), WithMode(ModeOff))
	dir := e.victim(t)
	if _, err := e.call(t, t.Context(), "bash", map[string]string{"command": "rm -rf victim"}); err != nil {
		t.Fatal(err)
	}
	if exists(dir) || len(e.asker.requests()) != 0 {
		t.Errorf("mode off: folder kept %v, asked %d times", exists(dir), len(e.asker.requests()))
	}

	e = newEnv(t, newFakeAsker(AllowAlways), newMemoryStore(), WithMode(ModeAll))
	if err := os.WriteFile(filepath.Join(e.workspace, "a.txt"), []byte("a"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		tool string
		args map[string]string
	}{
		{"bash", map[string]string{"command": "echo one"}},
		{"bash", map[string]string{"command": "echo two"}}, // allowed for good by the first
		{"read", map[string]string{"path": "a.txt"}},       // read-only: never asked
		{"write", map[string]string{"path": "b.txt", "content": "b"}},
		{"bash", map[string]string{"command": "rm -rf victim"}}, // its own rule
	} {
		if _, err := e.call(t, t.Context(), c.tool, c.args); err != nil {
			t.Fatal(err)
		}
	}
	var got [][]string
	for _, r := range e.asker.requests() {
		got = append(got, ruleIDs(r.Rules))
	}
	want := [][]string{{"tool:bash"}, {"tool:write"}, {RuleRecursiveDelete}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("mode all: rules asked about (-want +got):\n%s", diff)
	}
}

// TestRequestRedactedAndShortened checks that the chat never sees a
// secret, and sees a long command's beginning and end.
func TestRequestRedactedAndShortened(t *testing.T) {
	e := newEnv(t, newFakeAsker(Deny), newMemoryStore())
	long := "rm -rf victim # " + strings.Repeat("x", 2000) + " " + fakeSecret + " end"
	if _, err := e.call(t, t.Context(), "bash", map[string]string{"command": long}); err != nil {
		t.Fatal(err)
	}
	reqs := e.asker.requests()
	if len(reqs) != 1 {
		t.Fatalf("asked %d times, want 1", len(reqs))
	}
	cmd := reqs[0].Command
	if strings.Contains(cmd, fakeSecret) {
		t.Errorf("the secret leaked into the request (length %d)", len(cmd))
	}
	if n := len([]rune(cmd)); n > shownLength {
		t.Errorf("request command is %d characters, want at most %d", n, shownLength)
	}
	if !strings.HasPrefix(cmd, "rm -rf victim") || !strings.HasSuffix(cmd, redactor.Token+" end") {
		t.Errorf("shortened command lost its beginning or its end: %q…%q", cmd[:20], cmd[len(cmd)-20:])
	}
}

// TestShortenedRequestSaysWhatItHides checks that a command whose middle
// is cut says how much is not shown: a harmless beginning can match the
// same rule as the delete hidden behind it.
func TestShortenedRequestSaysWhatItHides(t *testing.T) {
	e := newEnv(t, newFakeAsker(Deny), newMemoryStore())
	pad := strings.Repeat("#", 400)
	long := "rm -rf ./build\n" + pad + "\nrm -rf ~/\n" + pad + "\necho ok"
	if _, err := e.call(t, t.Context(), "bash", map[string]string{"command": long}); err != nil {
		t.Fatal(err)
	}
	reqs := e.asker.requests()
	if len(reqs) != 1 {
		t.Fatalf("asked %d times, want 1", len(reqs))
	}
	cmd := reqs[0].Command
	if n := len([]rune(cmd)); n > shownLength {
		t.Errorf("request command is %d characters, want at most %d", n, shownLength)
	}
	// What is shown, less the note, and what the note says is hidden
	// make the whole command.
	m := regexp.MustCompile(` … \[(\d+) characters not shown\] … `).FindStringSubmatch(cmd)
	if m == nil {
		t.Fatalf("the shortened command does not say what it leaves out: %q", cmd)
	}
	hidden, _ := strconv.Atoi(m[1])
	if shown := len([]rune(cmd)) - len([]rune(m[0])); shown+hidden != len([]rune(long)) {
		t.Errorf("%d characters shown and %d said hidden, want %d in all", shown, hidden, len([]rune(long)))
	}
	if strings.Contains(cmd, "rm -rf ~/") {
		t.Fatal("the test's command was not cut where it meant to be")
	}
}

// TestScheduledScript checks that a watcher's script is assessed when the
// job is created: asked about in the chat, denied without asking in a
// scheduled job's own turn, and not asked about when it is harmless.
func TestScheduledScript(t *testing.T) {
	tests := []struct {
		name       string
		ctx        func(context.Context) context.Context
		decision   Decision
		script     string
		wantAsked  int
		wantCreate bool
	}{
		{"risky, denied in the chat", func(c context.Context) context.Context { return c }, Deny, "rm -rf ~", 1, false},
		{"risky, allowed in the chat", func(c context.Context) context.Context { return c }, AllowOnce, "git push -f", 1, true},
		{"risky, in a job's turn", Unattended, AllowOnce, "prlimit --pid 1 --cpu=1:1", 0, false},
		{"harmless", Unattended, Deny, "test -f done && echo ready", 0, true},
		{"no script", Unattended, Deny, "", 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			created := 0
			job := agenttest.NewTool("schedule_job", `{"type":"object","properties":{"schedule":{"type":"string"},"prompt":{"type":"string"},"script":{"type":"string"}}}`,
				func(context.Context, *agent.Call) (agent.Result, error) {
					created++
					return agent.Result{Content: []agent.Content{agent.Text("scheduled")}}, nil
				})
			// Declared as the scheduler's schedule_job declares it: the
			// script is a command kept to run later.
			job.ToolSpec.Effects = agent.Effects{Command: "script", Deferred: true}
			e := newEnvWith(t, newFakeAsker(tt.decision), newMemoryStore(), []agent.Tool{job})
			_, err := e.call(t, tt.ctx(t.Context()), "schedule_job", map[string]string{"schedule": "*/5 * * * *", "prompt": "check", "script": tt.script})
			if err != nil {
				t.Fatal(err)
			}
			if got := len(e.asker.requests()); got != tt.wantAsked {
				t.Errorf("asked %d times, want %d", got, tt.wantAsked)
			}
			if got := created == 1; got != tt.wantCreate {
				t.Errorf("job created: %v, want %v", got, tt.wantCreate)
			}
			if reqs := e.asker.requests(); len(reqs) > 0 && !strings.Contains(reqs[0].Command, tt.script) {
				t.Errorf("the request shows %q, not the script", reqs[0].Command)
			}
		})
	}
}

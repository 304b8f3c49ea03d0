package approvals

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/scheduler"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// effectsScope is the chat the probes run in.
const effectsScope = "telegram:1"

// probe is one call of a registered tool for TestDeclaredEffects: the
// arguments that make it do what it is for. What it then does is observed,
// not written here, except what no test can see during the call.
type probe struct {
	// setup prepares the probe's world (a file to read or edit, a job to
	// cancel) and returns the call's arguments.
	setup func(t *testing.T, w *probeWorld) map[string]any
	// later names the argument the tool keeps, to run as a command later
	// with nobody watching (a watcher's script): that run is out of the
	// call's sight, so the probe says so.
	later string
}

// builtInProbes has a probe for each tool the bot registers.
func builtInProbes() map[string]probe {
	file := func(name, content string) func(t *testing.T, w *probeWorld) {
		return func(t *testing.T, w *probeWorld) {
			if err := os.WriteFile(filepath.Join(w.workspace, name), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	args := func(prep func(t *testing.T, w *probeWorld), m map[string]any) func(t *testing.T, w *probeWorld) map[string]any {
		return func(t *testing.T, w *probeWorld) map[string]any {
			if prep != nil {
				prep(t, w)
			}
			return m
		}
	}
	return map[string]probe{
		"bash":      {setup: args(nil, map[string]any{"command": "echo ran > bash.out"})},
		"read":      {setup: args(file("a.txt", "text\n"), map[string]any{"path": "a.txt"})},
		"write":     {setup: args(nil, map[string]any{"path": "sub/w.txt", "content": "new"})},
		"edit":      {setup: args(file("e.txt", "old line\n"), map[string]any{"path": "e.txt", "old_text": "old", "new_text": "new"})},
		"send_file": {setup: args(file("s.txt", "to send\n"), map[string]any{"path": "s.txt", "caption": "c"})},
		"schedule_job": {
			setup: args(nil, map[string]any{"schedule": "@daily", "prompt": "report", "script": "echo watched-by-probe", "name": "probe"}),
			later: "script",
		},
		"list_jobs": {setup: func(t *testing.T, w *probeWorld) map[string]any {
			w.scheduleJob(t)
			return map[string]any{}
		}},
		"cancel_job": {setup: func(t *testing.T, w *probeWorld) map[string]any {
			return map[string]any{"id": w.scheduleJob(t)}
		}},
	}
}

// TestDeclaredEffects runs every tool the bot registers (the built-in
// tools and the scheduler's, as run.go registers them) and checks what
// each did against what its spec declares: a tool that starts a process
// must declare the argument it runs, one that writes a file the argument
// naming it, one that keeps a command to run later that argument as a
// deferred command, and one declared read-only must change nothing. A
// tool without a probe fails too, so a new tool cannot go unchecked.
func TestDeclaredEffects(t *testing.T) {
	probes := builtInProbes()
	names := registeredToolNames(t)
	if len(names) < len(probes) {
		t.Errorf("registered tools %v, fewer than the probes", names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			p, ok := probes[name]
			if !ok {
				t.Fatalf("tool %s has no probe: add one to builtInProbes, and declare on its spec what it runs and writes (agent.Effects)", name)
			}
			w := newProbeWorld(t, nil)
			for _, problem := range w.run(t, name, p) {
				t.Error(problem)
			}
		})
	}
}

// TestDeclaredEffectsCatchesUndeclared proves TestDeclaredEffects can
// fail: tools that run, write or keep a command without declaring it, or
// that change something though declared read-only, are each reported,
// and an honest tool is not.
func TestDeclaredEffectsCatchesUndeclared(t *testing.T) {
	type cmdArgs struct {
		Command string `json:"command"`
	}
	type pathArgs struct {
		Path string `json:"path"`
	}
	run := func(ctx context.Context, call *agent.Call, args cmdArgs) (agent.Result, error) {
		res, err := call.Context.Exec(ctx, "bash", []string{"-c", args.Command}, agent.ExecOptions{})
		if err != nil {
			return agent.Result{}, err
		}
		return agent.TextResult(res.Stdout), nil
	}
	write := func(ctx context.Context, call *agent.Call, args pathArgs) (agent.Result, error) {
		p := filepath.Join(call.Context.Workspace, args.Path)
		return agent.TextResult("wrote"), os.WriteFile(p, []byte("x"), 0o644)
	}
	keep := func(dir string) agent.ToolFunc[cmdArgs] {
		return func(ctx context.Context, call *agent.Call, args cmdArgs) (agent.Result, error) {
			return agent.TextResult("kept"), os.WriteFile(filepath.Join(dir, "kept.json"), fmt.Appendf(nil, "%q", args.Command), 0o600)
		}
	}
	runProbe := probe{setup: func(*testing.T, *probeWorld) map[string]any { return map[string]any{"command": "echo hi > out.txt"} }}
	writeProbe := probe{setup: func(*testing.T, *probeWorld) map[string]any { return map[string]any{"path": "w.txt"} }}
	tests := []struct {
		name  string
		tool  func(stateDir string) agent.Tool
		probe probe
		want  string
	}{
		{"runs undeclared", func(string) agent.Tool { return agent.NewTool(agent.ToolSpec{Name: "t"}, run) }, runProbe,
			`runs "bash -c echo hi > out.txt" but declares no command argument`},
		{"runs, declared deferred", func(string) agent.Tool {
			return agent.NewTool(agent.ToolSpec{Name: "t", Effects: agent.Effects{Command: "command", Deferred: true}}, run)
		}, runProbe, `runs "bash -c echo hi > out.txt" but declares no command argument`},
		{"writes undeclared", func(string) agent.Tool { return agent.NewTool(agent.ToolSpec{Name: "t"}, write) }, writeProbe,
			"writes w.txt in the workspace but declares no argument as the path it writes"},
		{"read-only writes", func(string) agent.Tool {
			return agent.NewTool(agent.ToolSpec{Name: "t", Effects: agent.Effects{ReadOnly: true}}, write)
		}, writeProbe, "declares itself read-only, but it changed w.txt in the workspace"},
		{"keeps a command undeclared", func(dir string) agent.Tool { return agent.NewTool(agent.ToolSpec{Name: "t"}, keep(dir)) },
			probe{setup: runProbe.setup, later: "command"}, "keeps command to run later but does not declare it a deferred command"},
		{"honest runner", func(string) agent.Tool {
			return agent.NewTool(agent.ToolSpec{Name: "t", Effects: agent.Effects{Command: "command"}}, run)
		}, runProbe, ""},
		{"honest writer", func(string) agent.Tool {
			return agent.NewTool(agent.ToolSpec{Name: "t", Effects: agent.Effects{WritesPath: "path"}}, write)
		}, writeProbe, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := newProbeWorld(t, tt.tool)
			got := strings.Join(w.run(t, "t", tt.probe), "\n")
			if tt.want == "" && got != "" {
				t.Errorf("an honest tool was reported: %s", got)
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("problems %q do not include %q", got, tt.want)
			}
		})
	}
}

// registeredToolNames returns the names of the tools a probe world offers
// the model.
func registeredToolNames(t *testing.T) []string {
	var names []string
	for _, s := range newProbeWorld(t, nil).agent.Tools() {
		names = append(names, s.Name)
	}
	return names
}

// probeWorld is an agent with the bot's tools (or one test tool), a chat
// session, and everything a call may change in sight: the processes it
// starts, the files under its workspace and its state folder, what it
// sends the chat.
type probeWorld struct {
	agent     *agent.Agent
	session   *agent.Session
	provider  *agenttest.FauxProvider
	sched     *scheduler.Scheduler
	workspace string
	stateDir  string

	mu     sync.Mutex
	spawns []spawn
	sent   []string
}

// newProbeWorld builds the world with the built-in tools and the
// scheduler, or, when tool is set, with that tool alone (given the state
// folder).
func newProbeWorld(t *testing.T, tool func(stateDir string) agent.Tool) *probeWorld {
	t.Helper()
	w := &probeWorld{workspace: t.TempDir(), stateDir: t.TempDir()}
	popts := spawnpolicy.DefaultOptions()
	popts.HardenHostProcess = false
	popts.Hooks = []spawnpolicy.Hook{func(c spawnpolicy.Context) (spawnpolicy.Context, error) {
		w.mu.Lock()
		w.spawns = append(w.spawns, spawn{c.Command, slices.Clone(c.Args)})
		w.mu.Unlock()
		return c, nil
	}}
	policy, err := spawnpolicy.New(popts, nil, func() map[string]string {
		return map[string]string{"PATH": "/usr/bin:/bin", "HOME": w.workspace}
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := []agent.Option{agent.WithWorkspace(w.workspace), agent.WithSessionDir(t.TempDir())}
	if tool != nil {
		opts = append(opts, agent.WithTools(tool(w.stateDir)))
	} else {
		w.sched, err = scheduler.New(filepath.Join(w.stateDir, "jobs.json"),
			scheduler.WithWorkspace(w.workspace), scheduler.WithLogger(slog.New(slog.DiscardHandler)))
		if err != nil {
			t.Fatal(err)
		}
		opts = append(opts, agent.WithTools(append(tools.All(), tools.NewSendFile())...), agent.WithExtensions(w.sched))
	}
	w.provider = agenttest.NewFauxProvider()
	w.agent, err = agent.New(w.provider, policy, redactor.New(nil), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.agent.Close)
	if err := w.agent.Start(t.Context()); err != nil {
		t.Fatal(err)
	}
	w.session, err = w.agent.Session(t.Context(), agent.SessionOptions{ID: "chat-1", Scope: effectsScope})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// scheduleJob adds a job to the chat, as a probe's setup, and returns its id.
func (w *probeWorld) scheduleJob(t *testing.T) string {
	t.Helper()
	job, err := w.sched.Schedule(effectsScope, "@daily", "earlier job", "", "earlier")
	if err != nil {
		t.Fatal(err)
	}
	return job.ID
}

// run makes the probe's call and returns each way in which what the tool
// did differs from what it declared.
func (w *probeWorld) run(t *testing.T, name string, p probe) []string {
	t.Helper()
	args := p.setup(t, w)
	raw, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	var fx agent.Effects
	for _, s := range w.agent.Tools() {
		if s.Name == name {
			fx = s.Effects
		}
	}
	before := snapshot(t, w.workspace, w.stateDir)
	w.provider.Enqueue(agenttest.FauxToolCalls(agenttest.FauxCall(name, string(raw))), agenttest.FauxText("done"))
	if _, err := w.session.Prompt(agent.WithFrontEnd(t.Context(), probeChats{w}), []agent.Content{agent.Text("go")}, nil); err != nil {
		t.Fatal(err)
	}
	msgs := w.session.Messages()
	if res := msgs[len(msgs)-2]; res.Role != agent.RoleTool || res.IsError {
		t.Fatalf("the probe of %s failed, so nothing it does can be seen: %s", name, agent.TextOf(res.Content))
	}
	changed := changedFiles(before, snapshot(t, w.workspace, w.stateDir))
	w.mu.Lock()
	spawns, sent := slices.Clone(w.spawns), slices.Clone(w.sent)
	w.mu.Unlock()
	return judge(name, fx, args, p.later, spawns, changed, sent)
}

// spawn is a process a call started: its command and arguments.
type spawn struct {
	command string
	args    []string
}

// runs reports whether the process runs command: as its command line, or
// as an argument (bash -c command).
func (s spawn) runs(command string) bool {
	return command != "" && (s.command == command || slices.Contains(s.args, command))
}

// judge compares what a call did with what its tool declared. changed
// holds files as "workspace/<path>" or "state/<path>", and their content
// now.
func judge(name string, fx agent.Effects, args map[string]any, later string, spawns []spawn, changed map[string]string, sent []string) []string {
	var problems []string
	report := func(format string, a ...any) { problems = append(problems, name+": "+fmt.Sprintf(format, a...)) }
	arg := func(n string) string { s, _ := args[n].(string); return s }
	runsNow := fx.Command != "" && !fx.Deferred
	for _, sp := range spawns {
		if !runsNow || !sp.runs(arg(fx.Command)) {
			report("runs %q but declares no command argument that holds it (Effects.Command, not Deferred)", strings.Join(append([]string{sp.command}, sp.args...), " "))
		}
	}
	for _, f := range slices.Sorted(mapsKeys(changed)) {
		rel, inWorkspace := strings.CutPrefix(f, "workspace/")
		if !inWorkspace || (runsNow && len(spawns) > 0) {
			// A command may write anything, and the state folder is the
			// bot's own, written through no path argument.
			continue
		}
		if fx.WritesPath == "" || filepath.Clean(arg(fx.WritesPath)) != rel {
			report("writes %s in the workspace but declares no argument as the path it writes (Effects.WritesPath)", rel)
		}
	}
	if later != "" {
		value, _ := json.Marshal(arg(later))
		kept := false
		for _, content := range changed {
			kept = kept || strings.Contains(content, string(value))
		}
		switch {
		case fx.Command != later || !fx.Deferred:
			report("keeps %s to run later but does not declare it a deferred command (Effects.Command with Deferred)", later)
		case !kept:
			report("declares %s a deferred command, but the call kept no such command", later)
		}
	}
	if fx.ReadOnly {
		for _, f := range slices.Sorted(mapsKeys(changed)) {
			report("declares itself read-only, but it changed %s", strings.Replace(f, "workspace/", "", 1)+map[bool]string{true: " in the workspace", false: ""}[strings.HasPrefix(f, "workspace/")])
		}
		if len(spawns) > 0 || len(sent) > 0 {
			report("declares itself read-only, but it started %d process(es) and sent %d message(s) to the chat", len(spawns), len(sent))
		}
	}
	return problems
}

// mapsKeys returns an iterator over m's keys.
func mapsKeys(m map[string]string) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// snapshot reads every file under the workspace and the state folder.
func snapshot(t *testing.T, workspace, stateDir string) map[string]string {
	t.Helper()
	files := make(map[string]string)
	for prefix, root := range map[string]string{"workspace": workspace, "state": stateDir} {
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			files[prefix+"/"+rel] = string(b)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return files
}

// changedFiles returns the files added, changed or removed (as "") between
// two snapshots.
func changedFiles(before, after map[string]string) map[string]string {
	changed := make(map[string]string)
	for p, c := range after {
		if old, ok := before[p]; !ok || old != c {
			changed[p] = c
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			changed[p] = ""
		}
	}
	return changed
}

// probeChats is the chat for the probes, the front end of their turns: it
// records the files that reach it (the scheduler is never started, so no
// job reaches it).
type probeChats struct{ w *probeWorld }

func (c probeChats) record(what string) {
	c.w.mu.Lock()
	c.w.sent = append(c.w.sent, what)
	c.w.mu.Unlock()
}

func (c probeChats) SendFile(_ context.Context, _ string, f tools.OutgoingFile) (bool, error) {
	c.record("file " + f.Name)
	return false, nil
}

// TestJudge checks judge on its own, for what no real tool does.
func TestJudge(t *testing.T) {
	got := judge("t", agent.Effects{ReadOnly: true}, nil, "", nil, map[string]string{"state/jobs.json": "{}"}, []string{"file a"})
	want := []string{
		"t: declares itself read-only, but it changed state/jobs.json",
		"t: declares itself read-only, but it started 0 process(es) and sent 1 message(s) to the chat",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}
}

// TestAssessReadsEffects checks that a call is judged by what its tool
// declares, whatever the tool is called: a renamed shell tool is still
// assessed with the shell rules, a renamed writer against the writable
// roots, a tool named bash that declares nothing is not read as a
// command, and ModeAll spares exactly the tools declared read-only.
func TestAssessReadsEffects(t *testing.T) {
	workspace := t.TempDir()
	tests := []struct {
		name      string
		mode      Mode
		tool      string
		fx        agent.Effects
		args      string
		wantShown string
		wantIDs   []string
	}{
		{"renamed shell tool", ModeRisky, "run_shell", agent.Effects{Command: "cmd"}, `{"cmd":"rm -rf /srv"}`, "rm -rf /srv", []string{RuleRecursiveDelete}},
		{"command not a string", ModeRisky, "run_shell", agent.Effects{Command: "cmd"}, `{"cmd":1}`, `run_shell {"cmd":1}`, []string{RuleUnparsable}},
		{"deferred command assessed when kept", ModeRisky, "later", agent.Effects{Command: "script", Deferred: true}, `{"script":"rm -rf /srv"}`, "later script: rm -rf /srv", []string{RuleRecursiveDelete}},
		{"deferred command absent", ModeRisky, "later", agent.Effects{Command: "script", Deferred: true}, `{"prompt":"p"}`, `later {"prompt":"p"}`, nil},
		{"deferred command not a string", ModeRisky, "later", agent.Effects{Command: "script", Deferred: true}, `{"script":1}`, `later {"script":1}`, []string{RuleUnparsable}},
		{"bash declaring nothing", ModeRisky, "bash", agent.Effects{}, `{"command":"rm -rf /srv"}`, `bash {"command":"rm -rf /srv"}`, nil},
		{"renamed writer outside", ModeRisky, "save", agent.Effects{WritesPath: "to"}, `{"to":"/etc/passwd"}`, "save /etc/passwd", []string{RuleWriteOutsideView}},
		{"renamed writer inside", ModeRisky, "save", agent.Effects{WritesPath: "to"}, `{"to":"notes.txt"}`, "save notes.txt", nil},
		{"all: read-only spared", ModeAll, "peek", agent.Effects{ReadOnly: true}, `{}`, "peek {}", nil},
		{"all: read named read but undeclared", ModeAll, "read", agent.Effects{}, `{"path":"a"}`, `read {"path":"a"}`, []string{toolPrefix + "read"}},
		{"all: command and tool rule", ModeAll, "run_shell", agent.Effects{Command: "cmd"}, `{"cmd":"ls"}`, "ls", []string{toolPrefix + "run_shell"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := New(WithMode(tt.mode))
			shown, ids := e.assess(tt.tool, tt.fx, json.RawMessage(tt.args), workspace)
			if shown != tt.wantShown {
				t.Errorf("shown %q, want %q", shown, tt.wantShown)
			}
			if diff := cmp.Diff(tt.wantIDs, ids); diff != "" {
				t.Errorf("rules (-want +got):\n%s", diff)
			}
		})
	}
}

package tools_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// TestBashSpawnPolicy checks that the child sees the
// policy's environment, the host hooks' rewrites and the session's zone.
func TestBashSpawnPolicy(t *testing.T) {
	profile := filepath.Join(t.TempDir(), "profile.sh")
	if err := os.WriteFile(profile, []byte("export HOOKED=from-profile\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	sourceHook := func(c spawnpolicy.Context) (spawnpolicy.Context, error) {
		c.Command = "source " + profile + "\n" + c.Command
		return c, nil
	}
	tests := []struct {
		name        string
		cfg         fixtureConfig
		command     string
		want        []string
		wantMissing []string
	}{
		{
			name:        "env hides the filtered secret",
			command:     "env",
			want:        []string{"KEEP_ME=kept-value", "HOME=/home/tools-test"},
			wantMissing: []string{"OPENAI_API_KEY"},
		},
		{
			name:    "a source-style hook prefix runs",
			cfg:     fixtureConfig{hooks: []spawnpolicy.Hook{sourceHook}},
			command: `echo "hooked=$HOOKED"`,
			want:    []string{"hooked=from-profile"},
		},
		{
			name:    "the session's zone shows in date",
			cfg:     fixtureConfig{timeZone: "Asia/Tokyo"},
			command: "date +%Z; echo TZ=$TZ",
			want:    []string{"JST", "TZ=Asia/Tokyo"},
		},
		{
			name:    "runs in the workspace with empty stdin",
			command: "pwd; cat; echo end",
			want:    []string{"end"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.cfg)
			res := f.call(t.Context(), t, tools.NewBash(), bashArgs(tt.command, 10), nil)
			text := agent.TextOf(res.Content)
			if res.IsError {
				t.Fatalf("IsError, text:\n%s", text)
			}
			for _, w := range tt.want {
				if !strings.Contains(text, w) {
					t.Errorf("output lacks %q:\n%s", w, text)
				}
			}
			for _, w := range tt.wantMissing {
				if strings.Contains(text, w) {
					t.Errorf("output contains %q", w)
				}
			}
			if strings.Contains(text, testSecret) {
				t.Errorf("output contains testSecret (%d bytes)", len(testSecret))
			}
			if tt.name == "runs in the workspace with empty stdin" && !strings.HasPrefix(text, f.workspace+"\n") {
				t.Errorf("pwd is not the workspace %s:\n%s", f.workspace, text)
			}
		})
	}
}

// TestBashSpawnRefused checks that a failing host hook or process_spawn
// handler gives the hook-failed error result and starts no process.
func TestBashSpawnRefused(t *testing.T) {
	failingHook := func(spawnpolicy.Context) (spawnpolicy.Context, error) {
		return spawnpolicy.Context{}, errors.New("no profile for this chat")
	}
	tests := []struct {
		name string
		cfg  fixtureConfig
		want string
	}{
		{
			name: "host hook",
			cfg:  fixtureConfig{hooks: []spawnpolicy.Hook{failingHook}},
			want: "process environment hook failed: spawnpolicy: hooks[0] failed: no profile for this chat",
		},
		{
			name: "extension handler",
			cfg:  fixtureConfig{opts: []agent.Option{agent.WithExtensions(spawnRefuser{})}},
			want: `process environment hook failed: agent: extension "refuser" process_spawn handler: refused by policy`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.cfg)
			marker := filepath.Join(f.workspace, "marker")
			res := f.call(t.Context(), t, tools.NewBash(), bashArgs("touch "+marker, 10), nil)
			if diff := cmp.Diff(agent.ErrorResult(tt.want), res); diff != "" {
				t.Errorf("result (-want +got):\n%s", diff)
			}
			if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("the marker exists (or stat failed: %v): a process was started", err)
			}
		})
	}
}

// spawnRefuser is an extension whose process_spawn handler refuses.
type spawnRefuser struct{}

func (spawnRefuser) Name() string { return "refuser" }
func (spawnRefuser) Activate(_ context.Context, api *agent.API) error {
	api.OnProcessSpawn(func(context.Context, *agent.ProcessSpawnEvent) error { return errors.New("refused by policy") })
	return nil
}

// TestBashResult checks the text and Details of how commands end.
func TestBashResult(t *testing.T) {
	tests := []struct {
		name     string
		args     string
		wantText string
		wantErr  bool
		wantExit any
	}{
		{name: "success", args: bashArgs("echo hello", 0), wantText: "hello\n\n[Exit code: 0]", wantExit: 0},
		{name: "non-zero exit", args: bashArgs("echo oops; exit 3", 0), wantText: "oops\n\n[Exit code: 3]", wantErr: true, wantExit: 3},
		{name: "stdout and stderr interleaved", args: bashArgs("echo a; echo b >&2; echo c; echo d >&2", 0), wantText: "a\nb\nc\nd\n\n[Exit code: 0]", wantExit: 0},
		{name: "no output", args: bashArgs("true", 0), wantText: "(no output)\n\n[Exit code: 0]", wantExit: 0},
		{name: "killed by a signal", args: bashArgs("kill -KILL $$", 0), wantText: "(no output)\n\n[Exit code: none, signal: killed]", wantErr: true, wantExit: -1},
		{name: "empty command", args: bashArgs("  ", 0), wantText: "command must not be empty", wantErr: true},
		{name: "negative timeout", args: `{"command":"true","timeout":-1}`, wantText: "timeout must be a positive number of seconds, not -1", wantErr: true},
	}
	f := newFixture(t, fixtureConfig{})
	bash := tools.NewBash()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res := f.call(t.Context(), t, bash, tt.args, nil)
			if diff := cmp.Diff(tt.wantText, agent.TextOf(res.Content)); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
			if res.IsError != tt.wantErr {
				t.Errorf("IsError = %v, want %v", res.IsError, tt.wantErr)
			}
			if diff := cmp.Diff(tt.wantExit, res.Details["exit_code"]); diff != "" {
				t.Errorf("Details[exit_code] (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBashKillsProcessGroup checks that a timeout or a cancelled call
// ends the whole process group, background grandchildren included, and
// returns what was printed with the reason.
func TestBashKillsProcessGroup(t *testing.T) {
	const body = "sleep 1000 & echo $! > bg.pid; echo started; "
	tests := []struct {
		name       string
		command    string
		timeout    float64
		cancelIn   time.Duration
		wantReason string
		wantDetail string
	}{
		{name: "timeout", command: body + "sleep 1000", timeout: 0.5, wantReason: "[Command timed out after 500ms; its process group was killed]", wantDetail: "timed_out"},
		{name: "cancel", command: body + "sleep 1000", cancelIn: 500 * time.Millisecond, wantReason: "[Command aborted: the call was cancelled; its process group was killed]", wantDetail: "cancelled"},
		{name: "SIGTERM ignored", command: "trap '' TERM; " + body + "while :; do sleep 0.05; done", timeout: 0.5, wantReason: "[Command timed out after 500ms; its process group was killed]", wantDetail: "timed_out"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureConfig{})
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			if tt.cancelIn > 0 {
				time.AfterFunc(tt.cancelIn, cancel)
			}
			res := callGuarded(ctx, t, f, tools.NewBash(tools.WithKillGrace(300*time.Millisecond)), bashArgs(tt.command, tt.timeout))
			pid := readPID(t, filepath.Join(f.workspace, "bg.pid"))
			killOnCleanup(t, pid)
			text := agent.TextOf(res.Content)
			if !res.IsError || !strings.HasPrefix(text, "started\n") || !strings.Contains(text, tt.wantReason) {
				t.Errorf("IsError %v, text:\n%s\nwant the output so far and %q", res.IsError, text, tt.wantReason)
			}
			if res.Details[tt.wantDetail] != true {
				t.Errorf("Details[%s] = %v, want true", tt.wantDetail, res.Details[tt.wantDetail])
			}
			if !processGone(pid, 2*time.Second) {
				t.Errorf("the background grandchild %d outlived the call", pid)
			}
		})
	}
}

// TestBashOutputHeldOpen checks that a background process keeping the
// output pipe open after the shell exited does not hang the call.
func TestBashOutputHeldOpen(t *testing.T) {
	tests := []struct {
		name      string
		command   string
		wantGone  bool
		needsPath string
	}{
		{name: "grandchild in the group is killed", command: "sleep 1000 & echo $! > bg.pid; echo done", wantGone: true},
		{name: "grandchild in its own session is cut off", command: "setsid sleep 1000 & echo $! > bg.pid; echo done", needsPath: "setsid"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if tt.needsPath != "" {
				if _, err := execLookPath(tt.needsPath); err != nil {
					t.Skipf("%s not installed", tt.needsPath)
				}
			}
			f := newFixture(t, fixtureConfig{})
			res := callGuarded(t.Context(), t, f, tools.NewBash(tools.WithPipeGrace(200*time.Millisecond), tools.WithKillGrace(300*time.Millisecond)), bashArgs(tt.command, 60))
			pid := readPID(t, filepath.Join(f.workspace, "bg.pid"))
			killOnCleanup(t, pid)
			if diff := cmp.Diff("done\n\n[Exit code: 0]", agent.TextOf(res.Content)); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
			if tt.wantGone && !processGone(pid, 2*time.Second) {
				t.Errorf("the background grandchild %d outlived the call", pid)
			}
		})
	}
}

// TestBashTimeoutCap checks that the configured maximum caps a longer
// requested timeout.
func TestBashTimeoutCap(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	bash := tools.NewBash(tools.WithMaxTimeout(300*time.Millisecond), tools.WithKillGrace(100*time.Millisecond))
	res := f.call(t.Context(), t, bash, bashArgs("sleep 1000", 1000), nil)
	want := "(no output)\n\n[Command timed out after 300ms, the configured maximum; its process group was killed]\n[Exit code: none, signal: terminated]"
	if diff := cmp.Diff(want, agent.TextOf(res.Content)); diff != "" {
		t.Errorf("text (-want +got):\n%s", diff)
	}
}

// TestBashTruncation checks the tail, the note and the saved full output.
func TestBashTruncation(t *testing.T) {
	seq := func(from, to int) string {
		var b strings.Builder
		for i := from; i <= to; i++ {
			fmt.Fprintf(&b, "%d\n", i)
		}
		return b.String()
	}
	tests := []struct {
		name     string
		limits   [2]int
		command  string
		wantTail string
		wantNote string
		wantFull string
	}{
		{name: "line limit", limits: [2]int{10, 1000}, command: "seq 1 100", wantTail: seq(91, 100), wantNote: "[Output truncated: showing the last 10 of 100 lines (31 B of 292 B). Full output: ", wantFull: seq(1, 100)},
		{name: "byte limit", limits: [2]int{2000, 20}, command: "seq 1 100", wantTail: seq(95, 100), wantNote: "[Output truncated: showing the last 6 of 100 lines (19 B of 292 B). Full output: ", wantFull: seq(1, 100)},
		{name: "one long line", limits: [2]int{2000, 10}, command: "printf 'abcdefghijklmnopqrstuvwxyz'", wantTail: "qrstuvwxyz", wantNote: "[Output truncated: showing the last 10 B of the last line (26 B in total). Full output: ", wantFull: "abcdefghijklmnopqrstuvwxyz"},
		{name: "exactly at the limits", limits: [2]int{10, 31}, command: "seq 91 100", wantTail: seq(91, 100)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, fixtureConfig{})
			res := f.call(t.Context(), t, tools.NewBash(tools.WithTailLimits(tt.limits[0], tt.limits[1])), bashArgs(tt.command, 10), nil)
			text := agent.TextOf(res.Content)
			tail, note, _ := strings.Cut(text, "\n\n")
			if diff := cmp.Diff(strings.TrimSuffix(tt.wantTail, "\n"), tail); diff != "" {
				t.Errorf("tail (-want +got):\n%s", diff)
			}
			logs, _ := filepath.Glob(filepath.Join(f.workspace, ".tmp", "bash-*.log"))
			if tt.wantNote == "" {
				if res.Details["truncated"] != false || len(logs) != 0 || note != "[Exit code: 0]" {
					t.Errorf("not truncated, but Details[truncated] = %v, saved files %v, note %q", res.Details["truncated"], logs, note)
				}
				return
			}
			path, _ := res.Details["full_output_path"].(string)
			if !strings.HasPrefix(note, tt.wantNote+path+"]") || !strings.HasPrefix(path, filepath.Join(f.workspace, ".tmp", "bash-")) {
				t.Errorf("note %q, full_output_path %q, want the note %q and a file in the workspace's .tmp", note, path, tt.wantNote)
			}
			full, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("reading the full output: %v", err)
			}
			if diff := cmp.Diff(tt.wantFull, string(full)); diff != "" {
				t.Errorf("full output (-want +got):\n%s", diff)
			}
		})
	}
}

// TestBashProgress checks that progress reports are growing snapshots of
// the tail, made only when the output changed: at most one per line the
// command prints (the throttling itself: TestProgressThrottled). The lines
// are longer than the redactor holds back of the stream, so each one
// reaches the snapshots while the command runs.
func TestBashProgress(t *testing.T) {
	f := newFixture(t, fixtureConfig{})
	var log progressLog
	bash := tools.NewBash(tools.WithProgressInterval(50 * time.Millisecond))
	res := f.call(t.Context(), t, bash, bashArgs("for i in 1 2 3 4 5; do printf 'line%d %0300d\\n' $i 0; sleep 0.15; done", 10), &log)
	var want strings.Builder
	for i := 1; i <= 5; i++ {
		fmt.Fprintf(&want, "line%d %s\n", i, strings.Repeat("0", 300))
	}
	reports := log.all()
	if len(reports) < 1 || len(reports) > 5 {
		t.Fatalf("%d progress reports, want at least one and at most one per line printed (5)", len(reports))
	}
	prev := ""
	for i, r := range reports {
		text := agent.TextOf(r.Content)
		if text == "" || len(text) <= len(prev) || !strings.HasPrefix(want.String(), text) {
			t.Errorf("report %d is %q, want a growing snapshot of the output after %q", i, text, prev)
		}
		prev = text
	}
	if !strings.HasPrefix(agent.TextOf(res.Content), want.String()) {
		t.Errorf("result: %q", agent.TextOf(res.Content))
	}
}

// callGuarded runs tool in f's session like fixture.call, failing the test
// if the call has not returned after 30 s: a guard against a hang, not a
// speed check.
func callGuarded(ctx context.Context, t *testing.T, f *fixture, tool agent.Tool, args string) agent.Result {
	t.Helper()
	type outcome struct {
		res agent.Result
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, err := tool.Execute(ctx, &agent.Call{ID: "call-1", Arguments: json.RawMessage(args), Context: f.session.ToolContext()})
		done <- outcome{res, err}
	}()
	select {
	case o := <-done:
		if o.err != nil {
			t.Fatalf("Execute(%s): %v", args, o.err)
		}
		return o.res
	case <-time.After(30 * time.Second):
		t.Fatalf("Execute(%s) hung", args)
		return agent.Result{}
	}
}

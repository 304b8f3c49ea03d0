package securitytest

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// execToolName is the tool the exec-probe extension offers the model.
const execToolName = "ext_exec"

// execExtension is an extension whose tool runs a bash script through
// ToolContext.Exec, optionally passing GITHUB_TOKEN explicitly, and returns
// everything the process printed: how an extension would expose Exec to a
// model if one did.
type execExtension struct {
	// explicit is the GITHUB_TOKEN value passed through ExecOptions.Env.
	explicit string
}

// Name names the extension.
func (execExtension) Name() string { return "exec-probe" }

// Activate registers the tool.
func (e execExtension) Activate(_ context.Context, api *agent.API) error {
	api.RegisterTool(execTool(e))
	return nil
}

// execTool runs {"script", "explicit"} with bash -c through Exec.
type execTool struct {
	explicit string
}

// Spec describes the tool.
func (execTool) Spec() agent.ToolSpec {
	return agent.ToolSpec{
		Name:        execToolName,
		Description: "Runs a bash script through the extension's Exec.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"script":{"type":"string"},"explicit":{"type":"boolean"}},"required":["script"]}`),
	}
}

// Execute runs the script and returns its stdout, stderr and exit code.
func (t execTool) Execute(ctx context.Context, call *agent.Call) (agent.Result, error) {
	var args struct {
		Script   string `json:"script"`
		Explicit bool   `json:"explicit"`
	}
	if err := json.Unmarshal(call.Arguments, &args); err != nil {
		return agent.Result{}, fmt.Errorf("decoding the arguments: %w", err)
	}
	opts := agent.ExecOptions{}
	if args.Explicit {
		opts.Env = map[string]*string{envGitHubToken: &t.explicit}
	}
	res, err := call.Context.Exec(ctx, "bash", []string{"-c", args.Script}, opts)
	if err != nil {
		return agent.Result{}, fmt.Errorf("exec: %w", err)
	}
	text := fmt.Sprintf("stdout:\n%s\nstderr:\n%s\nexit %d", res.Stdout, res.Stderr, res.ExitCode)
	if res.ExitCode != 0 {
		return agent.ErrorResult(text), nil
	}
	return agent.TextResult(text), nil
}

// TestSecurityExtensionExec covers an extension's Exec, which no extension
// of the bot exposes to the model: an in-process agent (FauxProvider) with an
// extension whose tool calls ToolContext.Exec, a spawn policy over an
// injected host environment holding the run's secrets (never the test's own
// environment), and the same channels searched: the requests the model was
// sent, the transcripts and the debug log.
func TestSecurityExtensionExec(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("needs Linux")
	}
	set, err := newSecretSet()
	if err != nil {
		t.Fatalf("generating secrets: %v", err)
	}
	dir := t.TempDir()
	secretsDir := filepath.Join(dir, "secrets")
	if err := os.MkdirAll(secretsDir, 0o700); err != nil {
		t.Fatal(err)
	}
	var all strings.Builder
	for _, sec := range set.known() {
		all.WriteString(sec.value + "\n")
	}
	if err := os.WriteFile(filepath.Join(secretsDir, "all"), []byte(all.String()), 0o600); err != nil {
		t.Fatal(err)
	}

	hostEnv := map[string]string{"PATH": botPath, "HOME": dir, "LANG": "C.UTF-8", "PROCESS_ENV_SECRETS": envInnocent + "," + envGitHubToken}
	for _, sec := range set.secrets {
		hostEnv[sec.name] = sec.envValue()
	}
	hostEnv[set.control.name] = set.control.value
	opts := spawnpolicy.DefaultOptions()
	// The policy must never harden the test process itself.
	opts.HardenHostProcess = false
	opts.Allow = append(opts.Allow, envControl)
	opts.SecretValues = values(set.known()) // the control among them: an allowed variable is a known secret

	logBuf := &syncBuffer{}
	red := redactor.New(opts.SecretValues)
	logger := slog.New(red.Handler(slog.NewJSONHandler(logBuf, &slog.HandlerOptions{Level: slog.LevelDebug})))
	policy, err := spawnpolicy.New(opts, logger, func() map[string]string { return hostEnv })
	if err != nil {
		t.Fatalf("building the policy: %v", err)
	}

	s := filepath.Join(secretsDir, "all")
	tests := []struct {
		name     string
		script   string
		explicit bool
		expect   []expectation
	}{
		{name: "exec-env", script: "env; cat /proc/self/environ | tr '\\0' '\\n'", expect: []expectation{expectControlRedacted}},
		{name: "exec-explicit-env", script: `env; echo "named: $GITHUB_TOKEN"`, explicit: true, expect: []expectation{expectControlRedacted, expectRedacted}},
		{name: "exec-file-encoded", script: "cat " + s + "; base64 -w0 " + s + "; echo; xxd -p " + s, expect: []expectation{expectRedacted}},
		{name: "exec-stderr-exit", script: "cat " + s + " >&2; exit 5", expect: []expectation{expectRedacted}},
	}
	var rows []row
	for _, tc := range tests {
		sessionDir := filepath.Join(dir, "sessions-"+tc.name)
		args, err := json.Marshal(map[string]any{"script": tc.script, "explicit": tc.explicit})
		if err != nil {
			t.Fatal(err)
		}
		faux := agenttest.NewFauxProvider(
			agenttest.FauxToolCalls(agenttest.FauxCall(execToolName, string(args))),
			agenttest.FauxText("done"),
		)
		a, err := agent.New(faux, policy, red,
			agent.WithExtensions(execExtension{explicit: set.byName(envGitHubToken).value}),
			agent.WithSessionDir(sessionDir), agent.WithWorkspace(dir), agent.WithLogger(logger))
		if err != nil {
			t.Fatalf("building the agent: %v", err)
		}
		if err := a.Start(context.Background()); err != nil {
			t.Fatalf("starting the agent: %v", err)
		}
		sess, err := a.Session(context.Background(), agent.SessionOptions{ID: tc.name, Scope: tc.name})
		if err != nil {
			t.Fatalf("opening a session: %v", err)
		}
		if _, err := sess.Prompt(context.Background(), []agent.Content{agent.Text("run the check")}, nil); err != nil {
			t.Errorf("%s: the turn failed: %v", tc.name, red.Redact(err.Error()))
		}
		a.Close()

		var model []piece
		var toolResults strings.Builder
		for i, req := range faux.Requests() {
			body, err := json.Marshal(req)
			if err != nil {
				t.Fatal(err)
			}
			model = append(model, piece{where: fmt.Sprintf("request %d", i), text: string(body)})
			for _, m := range req.Messages {
				if m.Role == agent.RoleTool {
					toolResults.WriteString(agent.TextOf(m.Content) + "\n")
				}
			}
		}
		var files []piece
		_ = filepath.WalkDir(sessionDir, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if data, rerr := os.ReadFile(path); rerr == nil {
					files = append(files, piece{where: "file " + d.Name(), text: string(data)})
				}
			}
			return nil
		})
		rows = append(rows,
			leakRow(tc.name, chanModel, set.searched(), model),
			leakRow(tc.name, chanAgentDir, set.searched(), files),
		)
		ex := row{vector: tc.name, channel: chanExercise, outcome: outcomePass}
		for _, e := range tc.expect {
			if !e.in(set, toolResults.String()) {
				ex.outcome = outcomeFail
				ex.details = append(ex.details, "missing "+e.what)
			}
		}
		rows = append(rows, ex)
	}
	rows = append(rows, leakRow("(all)", chanLog, set.searched(), []piece{{where: "agent log", text: logBuf.String()}}))
	t.Logf("extension Exec:\n%s", formatTable(rows))
	for _, r := range rows {
		t.Run(r.vector+"/"+r.channel, func(t *testing.T) {
			if r.outcome != outcomePass {
				t.Errorf("%s: %s", r.outcome, strings.Join(r.details, "; "))
			}
		})
	}
}

package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// TestSpawnRefused checks that every refusal of PrepareProcess and Exec
// matches ErrSpawnRefused, carries the refusal's own message without a
// spawner's wording, and that a tool result quoting it is redacted by the
// loop; an error that is not a refusal does not match.
func TestSpawnRefused(t *testing.T) {
	hookErr := func(spawnpolicy.Context) (spawnpolicy.Context, error) {
		return spawnpolicy.Context{}, errors.New("no profile; key " + testSecret)
	}
	hookPanic := func(spawnpolicy.Context) (spawnpolicy.Context, error) {
		panic("hook exploded; key " + testSecret)
	}
	handler := func(err error, clear bool) *funcExtension {
		return &funcExtension{name: "guard", activate: func(ctx context.Context, api *agent.API) error {
			api.OnProcessSpawn(func(ctx context.Context, ev *agent.ProcessSpawnEvent) error {
				if clear {
					ev.Context.Command = ""
				}
				return err
			})
			return nil
		}}
	}
	tests := []struct {
		name    string
		hooks   []spawnpolicy.Hook
		opts    []agent.Option
		cancel  bool
		want    string
		refused bool
	}{
		{name: "host hook error", hooks: []spawnpolicy.Hook{hookErr}, want: "no profile", refused: true},
		{name: "host hook panic", hooks: []spawnpolicy.Hook{hookPanic}, want: "hook exploded", refused: true},
		{name: "handler error", opts: []agent.Option{agent.WithExtensions(handler(errors.New("refused by policy"), false))},
			want: `agent: extension "guard" process_spawn handler: refused by policy`, refused: true},
		{name: "handler clears the command", opts: []agent.Option{agent.WithExtensions(handler(nil, true))},
			want: "the spawn context has no command", refused: true},
		{name: "cancelled, not refused", cancel: true, want: "context canceled"},
	}
	safe := redactor.New([]string{testSecret}).Redact
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var prepErr, execErr error
			tool := agenttest.NewTool("spawn", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) {
				pctx := ctx
				if tt.cancel {
					c, cancel := context.WithCancel(ctx)
					cancel()
					pctx = c
				}
				_, prepErr = call.Context.PrepareProcess(pctx, spawnRequest())
				_, execErr = call.Context.Exec(pctx, "true", nil, agent.ExecOptions{})
				if prepErr != nil {
					return agent.ErrorResult(prepErr.Error()), nil
				}
				return agent.TextResult("started"), nil
			})
			opts := append([]agent.Option{agent.WithWorkspace(t.TempDir()), agent.WithTools(tool)}, tt.opts...)
			a, err := agent.New(agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("spawn", `{}`)), agenttest.FauxText("end")),
				newPolicy(t, tt.hooks...), redactor.New([]string{testSecret}), opts...)
			if err != nil {
				t.Fatal(err)
			}
			if err := a.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(a.Close)
			s := openSession(t, a, agent.SessionOptions{})
			if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, nil); err != nil {
				t.Fatal(err)
			}
			for name, err := range map[string]error{"PrepareProcess": prepErr, "Exec": execErr} {
				if err == nil {
					t.Fatalf("%s did not fail", name)
				}
				msg := err.Error()
				if got := errors.Is(err, agent.ErrSpawnRefused); got != tt.refused {
					t.Errorf("%s: errors.Is(err, ErrSpawnRefused) = %v, want %v (%s)", name, got, tt.refused, safe(msg))
				}
				if !strings.Contains(msg, tt.want) {
					t.Errorf("%s error %q lacks %q", name, safe(msg), tt.want)
				}
				if strings.Contains(msg, "process environment hook failed") {
					t.Errorf("%s error %q carries the bash tool's wording", name, safe(msg))
				}
			}
			result := agent.TextOf(s.Messages()[2].Content)
			if leaks(result) {
				t.Error("the tool result quoting the refusal holds the secret")
			}
			if strings.Contains(tt.name, "host hook") && !strings.Contains(result, redactor.Token) {
				t.Errorf("the tool result %q is not redacted", result)
			}
		})
	}
}

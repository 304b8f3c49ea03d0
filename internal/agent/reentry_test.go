package agent_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// promptWithGuard runs one turn of s, failing the test if it has not ended
// after 30 s (a hang guard only: a self-deadlock never ends).
func promptWithGuard(t *testing.T, s *agent.Session, emit func(agent.Event)) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, emit)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the turn deadlocked")
		return nil
	}
}

// TestCloseAndPromptInsideTurn checks that closing or prompting a session
// from inside its own turn (a tool, a tool_call or tool_result handler)
// fails with ErrInsideTurn instead of waiting for itself, and that closing
// from outside a turn works.
func TestCloseAndPromptInsideTurn(t *testing.T) {
	tests := []struct {
		name string
		// where is "tool", "tool_call" or "tool_result".
		where string
		// act is what the code inside the turn does to s.
		act func(ctx context.Context, s *agent.Session) error
	}{
		{"close from a tool", "tool", func(ctx context.Context, s *agent.Session) error { return s.CloseContext(ctx) }},
		{"close from a tool_call handler", "tool_call", func(ctx context.Context, s *agent.Session) error { return s.CloseContext(ctx) }},
		{"close from a tool_result handler", "tool_result", func(ctx context.Context, s *agent.Session) error { return s.CloseContext(ctx) }},
		{"prompt from a tool", "tool", func(ctx context.Context, s *agent.Session) error {
			_, err := s.Prompt(ctx, []agent.Content{agent.Text("again")}, nil)
			return err
		}},
		{"prompt from a tool_result handler", "tool_result", func(ctx context.Context, s *agent.Session) error {
			_, err := s.Prompt(ctx, []agent.Content{agent.Text("again")}, nil)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var session atomic.Pointer[agent.Session]
			got := make(chan error, 1)
			act := func(ctx context.Context) { got <- tt.act(ctx, session.Load()) }
			tool := agenttest.NewTool("act", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) {
				if tt.where == "tool" {
					act(ctx)
				}
				return agent.TextResult("ok"), nil
			})
			ext := &funcExtension{name: "closer", activate: func(_ context.Context, api *agent.API) error {
				api.OnToolCall(func(ctx context.Context, ev *agent.ToolCallEvent) error {
					if tt.where == "tool_call" {
						act(ctx)
					}
					return nil
				})
				api.OnToolResult(func(ctx context.Context, ev *agent.ToolResultEvent) error {
					if tt.where == "tool_result" {
						act(ctx)
					}
					return nil
				})
				return nil
			}}
			faux := agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("act", `{}`)), agenttest.FauxText("done"), agenttest.FauxText("next"))
			a := newTestAgent(t, faux, agent.WithTools(tool), agent.WithExtensions(ext))
			s := openSession(t, a, agent.SessionOptions{})
			session.Store(s)
			if err := promptWithGuard(t, s, nil); err != nil {
				t.Fatalf("the turn failed: %v", err)
			}
			if err := <-got; !errors.Is(err, agent.ErrInsideTurn) {
				t.Errorf("inside the turn: %v, want ErrInsideTurn", err)
			}
			if err := promptWithGuard(t, s, nil); err != nil {
				t.Fatalf("the session does not work after: %v", err)
			}
			if err := s.CloseContext(context.Background()); err != nil {
				t.Fatalf("CloseContext outside a turn: %v", err)
			}
			if err := promptWithGuard(t, s, nil); !errors.Is(err, agent.ErrSessionClosed) {
				t.Errorf("Prompt after CloseContext: %v, want ErrSessionClosed", err)
			}
		})
	}
}

// TestPrepareProcessFromEventHandler checks that an OnEvent handler may
// start a process: a refusal by a process_spawn handler, which reports an
// extension error while an event is being delivered, does not wait for
// that delivery; the error is delivered right after the event.
func TestPrepareProcessFromEventHandler(t *testing.T) {
	var session atomic.Pointer[agent.Session]
	spawnErr := make(chan error, 1)
	ext := &funcExtension{name: "watch", activate: func(_ context.Context, api *agent.API) error {
		api.OnProcessSpawn(func(context.Context, *agent.ProcessSpawnEvent) error { return errors.New("refused") })
		api.OnEvent(func(ev agent.Event) {
			if ev.Kind != agent.EventToolStart {
				return
			}
			_, err := session.Load().ToolContext().PrepareProcess(context.Background(),
				spawnpolicy.Request{Purpose: spawnpolicy.ExtensionExec, Command: "true"})
			spawnErr <- err
		})
		return nil
	}}
	tool := agenttest.NewTool("noop", "", func(context.Context, *agent.Call) (agent.Result, error) { return agent.TextResult("ok"), nil })
	faux := agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("noop", `{}`)), agenttest.FauxText("done"))
	a := newTestAgent(t, faux, agent.WithTools(tool), agent.WithExtensions(ext))
	s := openSession(t, a, agent.SessionOptions{})
	session.Store(s)
	var log eventLog
	if err := promptWithGuard(t, s, log.add); err != nil {
		t.Fatalf("the turn failed: %v", err)
	}
	if err := <-spawnErr; !errors.Is(err, agent.ErrSpawnRefused) {
		t.Errorf("PrepareProcess: %v, want ErrSpawnRefused", err)
	}
	want := []agent.EventKind{agent.EventTurnStart, agent.EventToolStart, agent.EventExtensionError, agent.EventToolEnd, agent.EventTurnEnd}
	got := kindsOf(log.all())
	if diff := cmp.Diff(want, got, cmpopts.IgnoreSliceElements(func(k agent.EventKind) bool { return k == agent.EventTextDelta })); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

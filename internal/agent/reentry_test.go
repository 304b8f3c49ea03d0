package agent

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// promptWithGuard runs one turn of s, failing the test if it has not ended
// after 30 s (a hang guard only: a self-deadlock never ends).
func promptWithGuard(t *testing.T, s *Session, emit func(Event)) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := s.Prompt(context.Background(), []Content{Text("go")}, emit)
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
		act func(ctx context.Context, s *Session) error
	}{
		{"close from a tool", "tool", func(ctx context.Context, s *Session) error { return s.CloseContext(ctx) }},
		{"close from a tool_call handler", "tool_call", func(ctx context.Context, s *Session) error { return s.CloseContext(ctx) }},
		{"close from a tool_result handler", "tool_result", func(ctx context.Context, s *Session) error { return s.CloseContext(ctx) }},
		{"prompt from a tool", "tool", func(ctx context.Context, s *Session) error {
			_, err := s.Prompt(ctx, []Content{Text("again")}, nil)
			return err
		}},
		{"prompt from a tool_result handler", "tool_result", func(ctx context.Context, s *Session) error {
			_, err := s.Prompt(ctx, []Content{Text("again")}, nil)
			return err
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var session atomic.Pointer[Session]
			got := make(chan error, 1)
			act := func(ctx context.Context) { got <- tt.act(ctx, session.Load()) }
			tool := newTool("act", "", func(ctx context.Context, call *Call) (Result, error) {
				if tt.where == "tool" {
					act(ctx)
				}
				return TextResult("ok"), nil
			})
			ext := &funcExtension{name: "closer", activate: func(_ context.Context, api *API) error {
				api.OnToolCall(func(ctx context.Context, ev *ToolCallEvent) error {
					if tt.where == "tool_call" {
						act(ctx)
					}
					return nil
				})
				api.OnToolResult(func(ctx context.Context, ev *ToolResultEvent) error {
					if tt.where == "tool_result" {
						act(ctx)
					}
					return nil
				})
				return nil
			}}
			faux := NewFauxProvider(FauxToolCalls(FauxCall("act", `{}`)), FauxText("done"), FauxText("next"))
			a := newTestAgent(t, faux, WithTools(tool), WithExtensions(ext))
			s := openSession(t, a, SessionOptions{})
			session.Store(s)
			if err := promptWithGuard(t, s, nil); err != nil {
				t.Fatalf("the turn failed: %v", err)
			}
			if err := <-got; !errors.Is(err, ErrInsideTurn) {
				t.Errorf("inside the turn: %v, want ErrInsideTurn", err)
			}
			if err := promptWithGuard(t, s, nil); err != nil {
				t.Fatalf("the session does not work after: %v", err)
			}
			if err := s.CloseContext(context.Background()); err != nil {
				t.Fatalf("CloseContext outside a turn: %v", err)
			}
			if err := promptWithGuard(t, s, nil); !errors.Is(err, ErrSessionClosed) {
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
	var session atomic.Pointer[Session]
	spawnErr := make(chan error, 1)
	ext := &funcExtension{name: "watch", activate: func(_ context.Context, api *API) error {
		api.OnProcessSpawn(func(context.Context, *ProcessSpawnEvent) error { return errors.New("refused") })
		api.OnEvent(func(ev Event) {
			if ev.Kind != EventToolStart {
				return
			}
			_, err := session.Load().ToolContext().PrepareProcess(context.Background(),
				spawnpolicy.Request{Purpose: spawnpolicy.ExtensionExec, Command: "true"})
			spawnErr <- err
		})
		return nil
	}}
	tool := newTool("noop", "", func(context.Context, *Call) (Result, error) { return TextResult("ok"), nil })
	faux := NewFauxProvider(FauxToolCalls(FauxCall("noop", `{}`)), FauxText("done"))
	a := newTestAgent(t, faux, WithTools(tool), WithExtensions(ext))
	s := openSession(t, a, SessionOptions{})
	session.Store(s)
	var log eventLog
	if err := promptWithGuard(t, s, log.add); err != nil {
		t.Fatalf("the turn failed: %v", err)
	}
	if err := <-spawnErr; !errors.Is(err, ErrSpawnRefused) {
		t.Errorf("PrepareProcess: %v, want ErrSpawnRefused", err)
	}
	want := []EventKind{EventTurnStart, EventToolStart, EventExtensionError, EventToolEnd, EventTurnEnd}
	got := kindsOf(log.all())
	if diff := cmp.Diff(want, got, cmpopts.IgnoreSliceElements(func(k EventKind) bool { return k == EventTextDelta })); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

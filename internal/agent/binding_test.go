package agent_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// orderLog records the order in which hooks and handlers ran.
type orderLog = recorder[string]

// spawnExtension returns an extension whose process_spawn handler records
// its name, sets a variable, and tries to change what it may not.
func spawnExtension(name string, order *orderLog, activated func(api *agent.API) error) *funcExtension {
	return &funcExtension{name: name, activate: func(ctx context.Context, api *agent.API) error {
		api.OnProcessSpawn(func(ctx context.Context, ev *agent.ProcessSpawnEvent) error {
			order.add(name)
			if ev.Session.Origin() != name {
				return errors.New("handler context has origin " + ev.Session.Origin())
			}
			ev.Context.Env["SEEN_BY_"+strings.ToUpper(strings.ReplaceAll(name, "-", "_"))] = "1"
			ev.Context.Scope = "hijacked"
			ev.Context.Purpose = spawnpolicy.Other
			return nil
		})
		if activated != nil {
			return activated(api)
		}
		return nil
	}}
}

// TestPrepareProcessBinding checks what a session binds to a spawn request.
func TestPrepareProcessBinding(t *testing.T) {
	order := &orderLog{}
	hook := func(c spawnpolicy.Context) (spawnpolicy.Context, error) {
		order.add("host")
		c.Env["HOST_HOOK"] = "1"
		return c, nil
	}
	var activationEnv map[string]string
	extA := spawnExtension("ext-a", order, func(api *agent.API) error {
		pc, err := api.Processes().Prepare(spawnpolicy.Request{Purpose: spawnpolicy.MCPServer, Command: "server", Cwd: t.TempDir(), Origin: "catalogue"})
		activationEnv = pc.Env
		return err
	})
	extB := spawnExtension("ext-b", order, nil)
	a, err := agent.New(agenttest.NewFauxProvider(), newPolicy(t, hook), redactor.New([]string{testSecret}),
		agent.WithWorkspace("/work/space"), agent.WithExtensions(extA, extB), agent.WithDefaultTimeZone("Asia/Tokyo"))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Start(context.Background()); err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer a.Close()
	if activationEnv == nil || activationEnv["HOST_HOOK"] != "1" {
		t.Error("api.Processes during activation did not run the host hook")
	}
	if _, ok := activationEnv["OPENAI_API_KEY"]; ok {
		t.Error("api.Processes kept OPENAI_API_KEY")
	}
	if got := order.all(); !cmp.Equal(got, []string{"host"}) {
		t.Errorf("activation ran %v, want only the host hook", got)
	}

	tests := []struct {
		name     string
		opts     agent.SessionOptions
		req      spawnpolicy.Request
		wantTZ   string
		wantCwd  string
		wantOrig string
	}{
		{"session zone", agent.SessionOptions{ID: "s1", Scope: "chat:42", TimeZone: "Europe/Berlin"},
			spawnpolicy.Request{Purpose: spawnpolicy.BashTool, Command: "date"}, "Europe/Berlin", "/work/space", ""},
		{"default zone", agent.SessionOptions{ID: "s2", Scope: "chat:43"},
			spawnpolicy.Request{Purpose: spawnpolicy.BashTool, Command: "date", Cwd: "/tmp"}, "Asia/Tokyo", "/tmp", ""},
		{"request zone wins", agent.SessionOptions{ID: "s3", Scope: "chat:44", TimeZone: "Europe/Berlin"},
			spawnpolicy.Request{Purpose: spawnpolicy.MCPServer, Command: "srv", TimeZoneID: "America/New_York", Origin: "github"}, "America/New_York", "/work/space", "github"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			order.items = nil
			s := openSession(t, a, tt.opts)
			pc, err := s.ToolContext().PrepareProcess(context.Background(), tt.req)
			if err != nil {
				t.Fatalf("PrepareProcess: %v", err)
			}
			got := map[string]string{
				"scope": pc.Scope, "session": pc.SessionID, "tz": pc.Env["TZ"], "cwd": pc.Cwd,
				"origin": pc.Origin, "purpose": pc.Purpose.String(),
				"host": pc.Env["HOST_HOOK"], "a": pc.Env["SEEN_BY_EXT_A"], "b": pc.Env["SEEN_BY_EXT_B"],
			}
			want := map[string]string{
				"scope": tt.opts.Scope, "session": tt.opts.ID, "tz": tt.wantTZ, "cwd": tt.wantCwd,
				"origin": tt.wantOrig, "purpose": tt.req.Purpose.String(),
				"host": "1", "a": "1", "b": "1",
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("context (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"host", "ext-a", "ext-b"}, order.all()); diff != "" {
				t.Errorf("order (-want +got):\n%s", diff)
			}
			for _, name := range []string{"OPENAI_API_KEY", "INNOCENT_NAME"} {
				if _, ok := pc.Env[name]; ok {
					t.Errorf("%s reached the child", name)
				}
			}
		})
	}
}

// TestPrepareProcessThroughATool checks that an extension's tool gets a
// context with the extension's origin.
func TestPrepareProcessThroughATool(t *testing.T) {
	var got spawnpolicy.Context
	ext := &funcExtension{name: "mcp", activate: func(ctx context.Context, api *agent.API) error {
		api.RegisterTool(agenttest.NewTool("mcp__srv__x", "", func(ctx context.Context, call *agent.Call) (agent.Result, error) {
			pc, err := call.Context.PrepareProcess(ctx, spawnpolicy.Request{Purpose: spawnpolicy.MCPServer, Command: "srv"})
			got = pc
			return agent.TextResult("ok"), err
		}))
		return nil
	}}
	faux := agenttest.NewFauxProvider(agenttest.FauxToolCalls(agenttest.FauxCall("mcp__srv__x", "{}")), agenttest.FauxText("done"))
	a := newTestAgent(t, faux, agent.WithExtensions(ext))
	s := openSession(t, a, agent.SessionOptions{ID: "t1", Scope: "chat:1", TimeZone: "UTC"})
	if _, err := s.Prompt(context.Background(), []agent.Content{agent.Text("go")}, nil); err != nil {
		t.Fatal(err)
	}
	if got.Origin != "mcp" || got.SessionID != "t1" || got.Env["TZ"] != "UTC" {
		t.Errorf("got origin %q session %q TZ %q, want mcp t1 UTC", got.Origin, got.SessionID, got.Env["TZ"])
	}
	if diff := cmp.Diff([]string{"mcp__srv__x"}, []string{a.Tools()[0].Name}); diff != "" {
		t.Error(diff)
	}
}

// TestProcessSpawnHandlerFailures checks that a failing handler, or one
// that leaves the context unusable, fails the spawn and is reported.
func TestProcessSpawnHandlerFailures(t *testing.T) {
	tests := []struct {
		name    string
		handler func(ctx context.Context, ev *agent.ProcessSpawnEvent) error
	}{
		{"error", func(ctx context.Context, ev *agent.ProcessSpawnEvent) error { return errors.New("no " + testSecret) }},
		{"panic", func(ctx context.Context, ev *agent.ProcessSpawnEvent) error { panic("bad handler") }},
		{"nil env", func(ctx context.Context, ev *agent.ProcessSpawnEvent) error { ev.Context.Env = nil; return nil }},
		{"no command", func(ctx context.Context, ev *agent.ProcessSpawnEvent) error { ev.Context.Command = ""; return nil }},
		{"no cwd", func(ctx context.Context, ev *agent.ProcessSpawnEvent) error { ev.Context.Cwd = ""; return nil }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var events eventLog
			ext := &funcExtension{name: "guard", activate: func(ctx context.Context, api *agent.API) error {
				api.OnProcessSpawn(tt.handler)
				api.OnEvent(events.add)
				return nil
			}}
			a := newTestAgent(t, agenttest.NewFauxProvider(), agent.WithExtensions(ext))
			s := openSession(t, a, agent.SessionOptions{})
			_, err := s.ToolContext().PrepareProcess(context.Background(), spawnpolicy.Request{Purpose: spawnpolicy.BashTool, Command: "true"})
			if err == nil {
				t.Fatal("PrepareProcess succeeded, want an error")
			}
			var reported []agent.Event
			for _, ev := range events.all() {
				if ev.Kind == agent.EventExtensionError {
					reported = append(reported, ev)
				}
			}
			if len(reported) != 1 || reported[0].Extension != "guard" || reported[0].SessionID != "chat-1" {
				t.Fatalf("got %d extension errors, want one from guard in chat-1", len(reported))
			}
			if leaks(reported[0].Err.Error()) {
				t.Error("the extension error holds the secret")
			}
		})
	}
}

// TestActivationError checks that an activation error names the extension
// and stops start-up, and that tool name clashes are caught. (A tool with
// an unusable schema does not stop it: TestUnsupportedSchemaStarts.)
func TestActivationError(t *testing.T) {
	tests := []struct {
		name     string
		activate func(ctx context.Context, api *agent.API) error
		want     string
	}{
		{"error", func(ctx context.Context, api *agent.API) error { return errors.New("no config") }, `"broken"`},
		{"duplicate tool", func(ctx context.Context, api *agent.API) error {
			api.RegisterTool(agenttest.NewTool("host", "", nil))
			return nil
		}, `tool "host" is registered twice`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, err := agent.New(agenttest.NewFauxProvider(), newPolicy(t), nil, agent.WithTools(agenttest.NewTool("host", "", nil)),
				agent.WithExtensions(&funcExtension{name: "broken", activate: tt.activate}))
			if err != nil {
				t.Fatal(err)
			}
			err = a.Start(context.Background())
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Start = %v, want an error containing %s", err, tt.want)
			}
			if _, err := a.Session(context.Background(), agent.SessionOptions{ID: "x"}); err == nil {
				t.Error("Session worked on an agent that failed to start")
			}
		})
	}
}

//go:build unix

package agent_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
)

// TestExecEnv checks that ExecOptions.Env still sets and removes variables,
// on top of the filtered base, in a real process.
func TestExecEnv(t *testing.T) {
	explicit := testSecret
	value := "set-explicitly"
	ext := &funcExtension{name: "runner", activate: func(ctx context.Context, api *agent.API) error { return nil }}
	a := newTestAgent(t, agenttest.NewFauxProvider(), agent.WithExtensions(ext))
	s := openSession(t, a, agent.SessionOptions{ID: "exec", TimeZone: "Europe/Berlin"})
	tc := s.ToolContext().WithOrigin("runner")
	res, err := tc.Exec(context.Background(), "env", nil, agent.ExecOptions{Env: map[string]*string{
		"EXTRA":          &value,
		"REMOVE_ME":      nil,
		"GITHUB_TOKEN":   &explicit, // denied when inherited, passed on purpose
		"NOT_THERE_ANYW": nil,
	}})
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	if res.ExitCode != 0 {
		t.Fatalf("env exited %d", res.ExitCode)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
		name, v, _ := strings.Cut(line, "=")
		got[name] = v
	}
	present := func(name string) bool { _, ok := got[name]; return ok }
	checks := map[string]bool{
		"EXTRA set":               got["EXTRA"] == value,
		"KEEP_ME inherited":       got["KEEP_ME"] == "kept-value",
		"REMOVE_ME removed":       !present("REMOVE_ME"),
		"OPENAI_API_KEY filtered": !present("OPENAI_API_KEY"),
		"INNOCENT_NAME filtered":  !present("INNOCENT_NAME"),
		"GITHUB_TOKEN explicit":   got["GITHUB_TOKEN"] == explicit,
		"TZ from session":         got["TZ"] == "Europe/Berlin",
		"nothing else from host":  !present("USER") || got["USER"] == "",
	}
	for name, ok := range checks {
		if !ok {
			t.Errorf("%s: failed (variables seen: %d)", name, len(got))
		}
	}
}

// TestExecExitAndTimeout checks exit codes, stdin, the workspace default
// and that a timeout kills the whole process group.
func TestExecExitAndTimeout(t *testing.T) {
	a := newTestAgent(t, agenttest.NewFauxProvider())
	s := openSession(t, a, agent.SessionOptions{})
	tc := s.ToolContext()

	res, err := tc.Exec(context.Background(), "sh", []string{"-c", "cat; pwd; exit 3"}, agent.ExecOptions{Stdin: strings.NewReader("in\n")})
	if err != nil {
		t.Fatalf("Exec: %v", err)
	}
	want := agent.ExecResult{Stdout: "in\n" + tc.Workspace + "\n", ExitCode: 3}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("result (-want +got):\n%s", diff)
	}

	// The deadline only guards against a hang: the timeout, and the kill of
	// the whole group (the background sleep holds the output open), must
	// end the call long before it.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, err = tc.Exec(ctx, "sh", []string{"-c", "sleep 30 & sleep 30; wait"}, agent.ExecOptions{Timeout: 200 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "timed out") || ctx.Err() != nil {
		t.Errorf("Exec with timeout = %v, want a timed out error", err)
	}
}

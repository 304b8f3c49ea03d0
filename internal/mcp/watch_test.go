package mcp

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/backoff"
)

// withSleep replaces how the back-offs wait.
func withSleep(f backoff.Sleeper) Option {
	return func(o *options) { o.clock.SleepFunc = f }
}

// statusLog records what the status hook was given.
type statusLog struct {
	mu  sync.Mutex
	all [][]ServerStatus
}

func (l *statusLog) add(s []ServerStatus) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, s)
}

func (l *statusLog) states() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.all {
		if len(s) == 1 && (len(out) == 0 || out[len(out)-1] != string(s[0].State)) {
			out = append(out, string(s[0].State))
		}
	}
	return out
}

// A server that fails twice (as npx does while the registry errs) and then
// answers gets its tools into a session that was open all along, while the
// status says each time what failed, with the server's own stderr.
func TestServerThatFailsTwiceJoinsTheRunningSession(t *testing.T) {
	count := filepath.Join(t.TempDir(), "starts")
	sc := fakeServer(t, "flaky", "-fail-count", count, "-fail-times", "2")
	var (
		mu     sync.Mutex
		delays []time.Duration
	)
	gate := make(chan struct{}, 2)
	sleep := func(ctx context.Context, d time.Duration) bool {
		mu.Lock()
		delays = append(delays, d)
		mu.Unlock()
		select {
		case <-gate:
			return true
		case <-ctx.Done():
			return false
		}
	}
	var log statusLog
	h := newHarness(t, Config{Servers: []ServerConfig{sc}}, withSleep(sleep), WithStatusHook(log.add),
		WithDiscoveryRetry(time.Second, time.Minute))
	st := h.ext.Servers()[0]
	if st.State != StateFailed || st.Attempts != 1 || st.Err == nil || st.RetryAt.IsZero() {
		t.Fatalf("after the first failed try the status is %+v", st)
	}
	if !strings.Contains(st.Err.Error(), "npm error code E503") {
		t.Errorf("the status's error %q lacks the server's own stderr", st.Err)
	}
	if hasTool(h.agent, "mcp__flaky__echo") {
		t.Fatal("the failing server's tools are offered")
	}
	s := h.session(t, "running")
	h.faux.Enqueue(agenttest.FauxText("before"))
	if _, err := s.Prompt(t.Context(), []agent.Content{agent.Text("hi")}, nil); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	gate <- struct{}{} // the second try, which fails
	gate <- struct{}{} // the third, which answers
	waitUntil(t, "the server's tools", func() bool { return hasTool(h.agent, "mcp__flaky__echo") })
	msg := h.call(t, s, "mcp__flaky__echo", `{"text":"back again"}`)
	if got := agent.TextOf(msg.Content); msg.IsError || got != "back again" {
		t.Errorf("the running session's call gave %v %q", msg.IsError, got)
	}
	st = h.ext.Servers()[0]
	if st.State != StateReady || st.Tools == 0 || st.Err != nil || st.Attempts != 3 {
		t.Errorf("once it answered the status is %+v", st)
	}
	mu.Lock()
	if len(delays) != 2 || delays[0] < 800*time.Millisecond || delays[0] > time.Second || delays[1] < 1600*time.Millisecond || delays[1] > 2*time.Second {
		t.Errorf("the back-offs were %v, want about 1s then 2s", delays)
	}
	mu.Unlock()
	if diff := strings.Join(log.states(), " "); diff != "starting failed ready" {
		t.Errorf("the status hook saw %q, want starting failed ready", diff)
	}
}

// A Streamable HTTP server that answers 503 with a Retry-After is tried
// again after that wait, whole, however short the back-off would be.
func TestDiscoveryWaitsRetryAfter(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "120")
		http.Error(w, "busy", http.StatusServiceUnavailable)
	}))
	t.Cleanup(srv.Close)
	got := make(chan time.Duration, 1)
	sleep := func(ctx context.Context, d time.Duration) bool {
		select {
		case got <- d:
		default:
		}
		<-ctx.Done()
		return false
	}
	h := newHarness(t, Config{Servers: []ServerConfig{{Name: "busy", URL: srv.URL}}}, withSleep(sleep))
	if st := h.ext.Servers()[0]; st.State != StateFailed {
		t.Fatalf("status %+v, want failed", st)
	}
	select {
	case d := <-got:
		if d != 2*time.Minute {
			t.Errorf("discovery waited %v before the next try, want the Retry-After's 2m0s", d)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("discovery did not back off")
	}
}

// hasTool reports whether the agent offers the tool name.
func hasTool(a *agent.Agent, name string) bool {
	return slices.ContainsFunc(a.Tools(), func(s agent.ToolSpec) bool { return s.Name == name })
}

// waitUntil polls cond for up to 20 s.
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestSummary(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	long := strings.Repeat("x", 500)
	tests := []struct {
		name string
		st   ServerStatus
		want string
	}{
		{"disabled", ServerStatus{Disabled: true}, "disabled"},
		{"starting", ServerStatus{State: StateStarting}, "starting"},
		{"ready", ServerStatus{State: StateReady, Tools: 12}, "ready, 12 tool(s)"},
		{"failed with stderr", ServerStatus{State: StateFailed, Attempts: 3, RetryAt: now.Add(40 * time.Second),
			Err: errorString("no answer within 30s: starting npx: context deadline exceeded; stderr: one\ntwo\n\nthree\nnpm error code E503\n")},
			"failed after 3 tries: no answer within 30s: starting npx: context deadline exceeded; stderr: two | three | npm error code E503; tried again in 40s"},
		{"failed once, no stderr", ServerStatus{State: StateFailed, Attempts: 1, Err: errorString("refused")}, "failed after 1 try: refused"},
		{"long cause cut", ServerStatus{State: StateFailed, Attempts: 2, Err: errorString(long)}, "failed after 2 tries: " + long[:summaryCauseLen] + summaryEllipsis},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.st.Summary(now); got != tt.want {
				t.Errorf("Summary =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// errorString is an error with the given text.
type errorString string

func (e errorString) Error() string { return string(e) }

// A session's stdio server that cannot be started (it died, and its
// restart fails) is not started again before its back-off has passed: a
// call meanwhile fails at once, saying when it is tried again.
func TestSessionServerRestartBacksOff(t *testing.T) {
	count := filepath.Join(t.TempDir(), "starts")
	sc := fakeServer(t, "once", "-fail-count", count, "-fail-after", "1")
	h := newHarness(t, Config{Servers: []ServerConfig{sc}}, WithReconnectBackoff(time.Hour, time.Hour))
	if !hasTool(h.agent, "mcp__once__echo") {
		t.Fatal("discovery, the one start that works, did not register the tools")
	}
	s := h.session(t, "s")
	first := h.call(t, s, "mcp__once__echo", `{"text":"x"}`)
	if text := agent.TextOf(first.Content); !first.IsError || !strings.Contains(text, "npm error code E503") || !strings.Contains(text, "tried again at a call made after 1h0m0s") {
		t.Errorf("the failed start gave %v: %s", first.IsError, text)
	}
	second := h.call(t, s, "mcp__once__echo", `{"text":"y"}`)
	if text := agent.TextOf(second.Content); !second.IsError || !strings.Contains(text, "it is tried again at a call made after") {
		t.Errorf("the call within the back-off gave %v: %s", second.IsError, text)
	}
	if b, err := os.ReadFile(count); err != nil || len(b) != 2 {
		t.Errorf("the server was started %d time(s) (%v), want 2: discovery and the one failed restart", len(b), err)
	}
}

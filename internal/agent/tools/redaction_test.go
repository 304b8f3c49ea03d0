package tools_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/redactor"
)

// straddlingOutput returns output whose tail of tailBytes bytes starts in
// the middle of a line holding the secret, and whose tail holds the secret
// once more.
func straddlingOutput(tailBytes int) string {
	head := strings.Repeat("head line\n", 20)
	straddle := "straddle " + testSecret + " end\n"
	last := "tail " + testSecret + "\n"
	// The cut falls in the middle of the straddling line's secret.
	cutInStraddle := len("straddle ") + len(testSecret)/2
	pad := tailBytes - (len(straddle) - cutInStraddle) - len(last)
	return head + straddle + strings.Repeat("p", pad-1) + "\n" + last
}

// TestBashRedactedThroughTheLoop runs bash through a real session (a faux
// model calling it) and checks that a configured secret printed by the
// command never leaves the loop: not in the progress snapshots, the end
// event, the transcript or the next model request.
func TestBashRedactedThroughTheLoop(t *testing.T) {
	tests := []struct {
		name    string
		content string
		command string
		opts    []tools.BashOption
		// wantUpdates asks for at least one progress report.
		wantUpdates bool
		// wantTruncated asks for a truncated result.
		wantTruncated bool
	}{
		{name: "cat secret.txt", content: "the key is " + testSecret + "\n", command: "cat secret.txt"},
		{
			name:          "secret straddles the truncation boundary",
			content:       straddlingOutput(200),
			command:       "cat secret.txt",
			opts:          []tools.BashOption{tools.WithTailLimits(2000, 200)},
			wantTruncated: true,
		},
		{
			name:        "every progress snapshot",
			content:     "the key is " + testSecret + "\n",
			command:     "cat secret.txt; sleep 0.3; cat secret.txt; sleep 0.3",
			opts:        []tools.BashOption{tools.WithProgressInterval(20 * time.Millisecond)},
			wantUpdates: true,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, fixtureConfig{tools: []agent.Tool{tools.NewBash(tt.opts...)}})
			if err := os.WriteFile(filepath.Join(f.workspace, "secret.txt"), []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			f.faux.Enqueue(agenttest.FauxToolCalls(agenttest.FauxCall("bash", bashArgs(tt.command, 10))), agenttest.FauxText("done"))
			var mu sync.Mutex
			var events []agent.Event
			_, err := f.session.Prompt(t.Context(), []agent.Content{agent.Text("run it")}, func(ev agent.Event) {
				mu.Lock()
				defer mu.Unlock()
				events = append(events, ev)
			})
			if err != nil {
				t.Fatalf("Prompt: %v", err)
			}
			var texts []string
			updates := 0
			for _, ev := range events {
				switch ev.Kind {
				case agent.EventToolUpdate:
					updates++
					texts = append(texts, "update: "+agent.TextOf(ev.Result.Content))
				case agent.EventToolEnd:
					if ev.Result.Details["truncated"] != tt.wantTruncated {
						t.Errorf("Details[truncated] = %v, want %v", ev.Result.Details["truncated"], tt.wantTruncated)
					}
					texts = append(texts, "end: "+agent.TextOf(ev.Result.Content))
				}
			}
			reqs := f.faux.Requests()
			if len(reqs) != 2 {
				t.Fatalf("%d model requests, want 2", len(reqs))
			}
			for _, m := range reqs[1].Messages {
				if m.Role == agent.RoleTool {
					texts = append(texts, "next request: "+agent.TextOf(m.Content))
				}
			}
			for _, m := range f.session.Messages() {
				if m.Role == agent.RoleTool {
					texts = append(texts, "history: "+agent.TextOf(m.Content))
				}
			}
			if tt.wantUpdates && updates == 0 {
				t.Errorf("no progress reports")
			}
			for _, text := range texts {
				where, body, _ := strings.Cut(text, ": ")
				if strings.Contains(body, testSecret[len(testSecret)/2:]) || strings.Contains(body, testSecret[:len(testSecret)/2]) {
					t.Errorf("%s holds testSecret or half of it (%d bytes)", where, len(testSecret))
				}
				// A progress snapshot may not show the token yet: the
				// stream's redaction holds back the end of the output.
				if where != "update" && !strings.Contains(body, redactor.Token) {
					t.Errorf("%s lacks %s: %q", where, redactor.Token, body)
				}
			}
		})
	}
}

// TestBashCancelledTurn checks that cancelling a turn kills the running
// command and that the loop records the output printed so far.
func TestBashCancelledTurn(t *testing.T) {
	f := newFixture(t, fixtureConfig{tools: []agent.Tool{tools.NewBash(tools.WithKillGrace(200 * time.Millisecond))}})
	f.faux.Enqueue(agenttest.FauxToolCalls(agenttest.FauxCall("bash", bashArgs("sleep 1000 & echo $! > bg.pid; echo started; sleep 1000", 0))))
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	_, err := f.session.Prompt(ctx, []agent.Content{agent.Text("run it")}, func(ev agent.Event) {
		if ev.Kind == agent.EventToolStart {
			time.AfterFunc(500*time.Millisecond, cancel)
		}
	})
	if err == nil {
		t.Fatalf("Prompt succeeded, want the cancellation")
	}
	pid := readPID(t, filepath.Join(f.workspace, "bg.pid"))
	killOnCleanup(t, pid)
	if !processGone(pid, 2*time.Second) {
		t.Errorf("the background grandchild %d outlived the turn", pid)
	}
	var tool []string
	for _, m := range f.session.Messages() {
		if m.Role == agent.RoleTool {
			tool = append(tool, agent.TextOf(m.Content))
		}
	}
	if len(tool) != 1 || !strings.HasPrefix(tool[0], "started\n") {
		t.Errorf("tool messages %q, want one with the output so far", tool)
	}
}

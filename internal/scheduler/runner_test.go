package scheduler

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// TestWatcherEnvironment checks that the script's
// environment comes from the spawn policy, so the bot token and a secret
// under an innocent name are absent, TZ is the target's zone and the
// working directory is the workspace.
func TestWatcherEnvironment(t *testing.T) {
	tests := []struct {
		target string
		wantTZ string
	}{
		{"chat-a", "TZ=Europe/Berlin"},
		{"chat-b", "TZ=America/New_York"},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			e := newEnv(t, setup{})
			j := e.schedule(t, tt.target, "@hourly", "report", `env; echo "CWD=$(pwd)"`)
			e.runNow(t, j.ID)
			msgs := e.chats.sent()
			if len(msgs) != 1 || msgs[0].Kind != "prompt" {
				t.Fatalf("want one prompt, got %d message(s)", len(msgs))
			}
			out := msgs[0].Text
			for _, bad := range []string{"TELEGRAM_BOT_TOKEN=", "INNOCENT_NAME=", redactor.Token} {
				if strings.Contains(out, bad) {
					t.Errorf("watcher environment shows %q: a secret variable was inherited", bad)
				}
			}
			if strings.Contains(out, e.token) || strings.Contains(out, e.secret) {
				t.Error("watcher environment holds a secret value")
			}
			for _, want := range []string{"KEEP_ME=visible", tt.wantTZ + "\n", "CWD=" + e.workspace} {
				if !strings.Contains(out, want) {
					t.Errorf("watcher output lacks %q", want)
				}
			}
		})
	}
}

// TestWatcherOutputRedacted checks that a secret the script reads from a
// file is redacted in the prompt (stdout) and in the failure alert
// (stderr tail).
func TestWatcherOutputRedacted(t *testing.T) {
	tests := []struct {
		name     string
		script   string
		wantKind string
	}{
		{"stdout", "cat secret.txt; cat token.txt", "prompt"},
		{"stderr tail", "cat secret.txt >&2; cat token.txt >&2; exit 3", "notify"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, setup{})
			e.writeFile(t, "secret.txt", "the secret is "+e.secret+"\n")
			e.writeFile(t, "token.txt", "the token is "+e.token+"\n")
			j := e.schedule(t, "chat-a", "@hourly", "what changed?", tt.script)
			e.runNow(t, j.ID)
			msgs := e.chats.sent()
			if len(msgs) != 1 || msgs[0].Kind != tt.wantKind {
				t.Fatalf("want one %s, got %d message(s)", tt.wantKind, len(msgs))
			}
			text := msgs[0].Text
			if strings.Contains(text, e.secret) || strings.Contains(text, e.token) {
				t.Fatal("a secret value reached the chat unredacted")
			}
			for _, want := range []string{"the secret is " + redactor.Token, "the token is " + redactor.Token} {
				if !strings.Contains(text, want) {
					t.Errorf("message lacks %q", want)
				}
			}
		})
	}
}

// TestWatcherOutcomes runs one watcher through a sequence of runs whose
// behaviour a file in the workspace selects: empty output and [SILENT]
// stay quiet, output becomes a prompt, the first failure alerts once,
// repeated failures stay quiet, and the recovery is announced.
func TestWatcherOutcomes(t *testing.T) {
	e := newEnv(t, setup{})
	j := e.schedule(t, "chat-a", "@hourly", "tell me what changed", `
case "$(cat mode)" in
empty) ;;
silent) echo "  [SILENT]  " ;;
output) echo "price is 42" ;;
fail) echo "boom" >&2; exit 2 ;;
esac`)
	steps := []struct {
		mode        string
		want        []sent // messages this run sends
		wantOutcome string
	}{
		{"empty", nil, "no output"},
		{"silent", nil, "silent"},
		{"output", []sent{{Kind: "prompt", Target: "chat-a", Label: "⏰ Job " + j.Name,
			Text: "tell me what changed\n\nOutput of the watcher script of job " + j.Name + " (" + j.ID + "):\nprice is 42\n"}}, "output sent to the chat"},
		{"fail", []sent{{Kind: "notify", Target: "chat-a",
			Text: "⚠️ Job " + j.Name + " (" + j.ID + ") failed: exit status 2\nstderr:\nboom\nFurther failures stay quiet until it recovers."}}, "failed: exit status 2"},
		{"fail", nil, "failed: exit status 2"},
		{"silent", []sent{{Kind: "notify", Target: "chat-a", Text: "✅ Job " + j.Name + " (" + j.ID + ") recovered after 2 failed runs."}}, "silent"},
		{"empty", nil, "no output"},
	}
	for i, st := range steps {
		before := len(e.chats.sent())
		e.writeFile(t, "mode", st.mode)
		e.runNow(t, j.ID)
		got := e.chats.sent()[before:]
		if diff := cmp.Diff(st.want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("step %d (%s): messages (-want +got):\n%s", i, st.mode, diff)
		}
		if o := e.job(t, j.ID).LastOutcome; o != st.wantOutcome {
			t.Errorf("step %d (%s): outcome %q, want %q", i, st.mode, o, st.wantOutcome)
		}
	}
}

// TestWatcherTimeoutKillsGroup checks that a script outliving its timeout
// gets SIGTERM first (its trap leaves a marker), then, when it ignores
// SIGTERM, SIGKILL for its whole process group (its background child, which
// ignores SIGTERM too and holds a named pipe open, dies), and that the chat
// is alerted.
func TestWatcherTimeoutKillsGroup(t *testing.T) {
	tests := []struct {
		name   string
		script string
	}{
		{"obeys SIGTERM", "trap 'echo TERM >> term.marker; exit 143' TERM; sleep 30 3>child.fifo & wait"},
		{"ignores SIGTERM", "trap '' TERM; sleep 30 3>child.fifo & trap 'echo TERM >> term.marker' TERM; while :; do wait; done"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, setup{opts: []Option{WithScriptTimeout(time.Second)}})
			e.s.cfg.killGrace = time.Second
			opened, gone := e.fifo(t, "child.fifo")
			j := e.schedule(t, "chat-a", "@hourly", "p", tt.script)
			ran := make(chan struct{})
			go func() {
				defer close(ran)
				e.runNow(t, j.ID)
			}()
			within(t, opened, "the script's child to start")
			within(t, ran, "the run to end")
			within(t, gone, "the script's background child to die")
			marker, err := readFileIn(e.workspace, "term.marker")
			if err != nil || string(marker) != "TERM\n" {
				t.Errorf("the script's SIGTERM marker is %q (%v), want one TERM before the kill", marker, err)
			}
			msgs := e.chats.sent()
			if len(msgs) != 1 || msgs[0].Kind != "notify" || !strings.Contains(msgs[0].Text, "timed out after 1s") {
				t.Errorf("want one timeout alert, got %+v", msgs)
			}
		})
	}
}

// TestWatcherHookFailure checks that a spawn hook's error is a failure
// with the hook's message, and that no process starts.
func TestWatcherHookFailure(t *testing.T) {
	hook := func(spawnpolicy.Context) (spawnpolicy.Context, error) {
		return spawnpolicy.Context{}, errors.New("no scripts today")
	}
	e := newEnv(t, setup{hooks: []spawnpolicy.Hook{hook}})
	j := e.schedule(t, "chat-a", "@hourly", "p", "touch ran")
	e.runNow(t, j.ID)
	msgs := e.chats.sent()
	if len(msgs) != 1 || msgs[0].Kind != "notify" {
		t.Fatalf("want one alert, got %+v", msgs)
	}
	if want := "failed: process environment hook failed: "; !strings.Contains(msgs[0].Text, want) || !strings.Contains(msgs[0].Text, "no scripts today") {
		t.Errorf("alert %q lacks %q and the hook's message", msgs[0].Text, want)
	}
	if _, err := readFileIn(e.workspace, "ran"); err == nil {
		t.Error("the script ran although its hook failed")
	}
}

// TestWatcherHookPanicRedacted checks that a hook's panic message, which
// the failure quotes, reaches the chat's alert redacted.
func TestWatcherHookPanicRedacted(t *testing.T) {
	var secret string
	hook := func(spawnpolicy.Context) (spawnpolicy.Context, error) {
		panic("no scripts today; key " + secret)
	}
	e := newEnv(t, setup{hooks: []spawnpolicy.Hook{hook}})
	secret = e.secret
	j := e.schedule(t, "chat-a", "@hourly", "p", "touch ran")
	e.runNow(t, j.ID)
	msgs := e.chats.sent()
	if len(msgs) != 1 || msgs[0].Kind != "notify" {
		t.Fatalf("want one alert, got %d messages", len(msgs))
	}
	if strings.Contains(msgs[0].Text, e.secret) {
		t.Fatal("the alert holds the secret the hook's panic quoted")
	}
	if !strings.Contains(msgs[0].Text, "no scripts today") || !strings.Contains(msgs[0].Text, "[REDACTED]") {
		t.Errorf("alert %q lacks the hook's redacted message", msgs[0].Text)
	}
}

// TestWatcherOutputCut checks the output limit and its note.
func TestWatcherOutputCut(t *testing.T) {
	e := newEnv(t, setup{opts: []Option{WithOutputLimit(100)}})
	j := e.schedule(t, "chat-a", "@hourly", "p", "head -c 5000 /dev/zero | tr '\\0' x")
	e.runNow(t, j.ID)
	msgs := e.chats.sent()
	if len(msgs) != 1 {
		t.Fatalf("want one prompt, got %d", len(msgs))
	}
	if !strings.Contains(msgs[0].Text, strings.Repeat("x", 100)+"\n[output cut: only the first 100 bytes are shown]") || strings.Contains(msgs[0].Text, strings.Repeat("x", 101)) {
		t.Errorf("output not cut at 100 bytes with a note: %q", msgs[0].Text)
	}
}

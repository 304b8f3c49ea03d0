package chat

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// echoAnswers answers every turn with "answer to " and the user's text.
func echoAnswers() *agenttest.FauxProvider {
	faux := agenttest.NewFauxProvider()
	faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		return agent.Response{Text: "answer to " + lastUserText(req)}, nil
	})
	return faux
}

// A 403 (the user blocked the bot) drops that message at once, without a
// retry, logs it, and the next message is answered as usual.
func TestForbiddenDropsTheMessage(t *testing.T) {
	tests := []struct {
		name string
		// send is what the user sends; its reply meets the 403.
		send string
		// what is the log's name for the dropped message.
		what string
	}{
		{"an answer", "first", "answer"},
		{"a command reply", "/help", "notice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := newLogRecorder()
			faux := echoAnswers()
			h := newHarness(t, harnessConfig{provider: faux, opts: []Option{WithLogger(rec.logger())}})
			h.tg.FailNext("sendMessage", 1, 403, "", 0)
			h.tg.SendText(userID, userID, tt.send)
			failed := h.tg.MustWaitFor(func(r telegramtest.Request) bool { return r.Method == "sendMessage" && r.Status == 403 })
			dropped := failed.Params["text"]
			got := rec.wait(t, "about the dropped message", isLog(slog.LevelWarn, "the user blocked the bot"))
			want := map[string]string{"what": tt.what, "scope": "1001"}
			if diff := cmp.Diff(want, map[string]string{"what": got.Attrs["what"], "scope": got.Attrs["scope"]}); diff != "" {
				t.Errorf("the log line's attributes (-want +got):\n%s", diff)
			}

			h.tg.SendText(userID, userID, "second")
			h.waitText(userID, "answer to second")
			for _, r := range h.tg.RequestsFor("sendMessage") {
				if r.Seq != failed.Seq && r.Params["text"] == dropped {
					t.Errorf("the dropped message was sent again (request %d, answered %d)", r.Seq, r.Status)
				}
			}
			for _, m := range h.tg.Messages(userID) {
				if m.Text == dropped {
					t.Errorf("the dropped message is in the chat")
				}
			}
		})
	}
}

// A failed getUpdates is logged and the next one waits for a back-off:
// a 409 (another instance polls the same token) at Error with what to do,
// a 5xx at Warn, a 429 for its whole retry_after. The back-off goes through
// an injected sleeper, so no test waits for real.
func TestPollFailureBacksOff(t *testing.T) {
	const base = 20 * time.Millisecond // the harness's retry policy
	tests := []struct {
		name               string
		code, retryAfter   int
		level              slog.Level
		msg                string
		minDelay, maxDelay time.Duration
		// logsErr says the log line carries the error (and so its code).
		logsErr bool
	}{
		{"another instance polls the token", 409, 0, slog.LevelError,
			"getUpdates conflict: another instance is polling this bot token; stop it (or remove its webhook)", base / 2, base, true},
		{"a server error", 502, 0, slog.LevelWarn, "getUpdates failed", base / 2, base, true},
		{"rate limited", 429, 3, slog.LevelWarn, "getUpdates rate limited", 3 * time.Second, 3 * time.Second, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type nap struct {
				delay time.Duration
				// polls is how many getUpdates the server had received
				// when the back-off began.
				polls int
			}
			naps := make(chan nap, 1)
			release := make(chan struct{})
			tg := telegramtest.New(t)
			tg.FailNext("getUpdates", 1, tt.code, "", tt.retryAfter)
			sleeper := func(ctx context.Context, d time.Duration) bool {
				select {
				case naps <- nap{delay: d, polls: len(tg.RequestsFor("getUpdates"))}:
				default: // a later back-off: the test looks at the first
				}
				select {
				case <-release:
					return true
				case <-ctx.Done():
					return false
				}
			}
			rec := newLogRecorder()
			h := newHarness(t, harnessConfig{provider: echoAnswers(), tg: tg,
				opts: []Option{WithLogger(rec.logger()), withPollSleep(sleeper)}})

			var got nap
			select {
			case got = <-naps:
			case <-time.After(15 * time.Second): // hang guard
				t.Fatal("polling never backed off")
			}
			if got.polls != 1 {
				t.Errorf("getUpdates calls before the back-off = %d, want 1 (the failed one)", got.polls)
			}
			if got.delay < tt.minDelay || got.delay > tt.maxDelay {
				t.Errorf("back-off = %v, want %v to %v", got.delay, tt.minDelay, tt.maxDelay)
			}
			logged := rec.find(isLog(tt.level, tt.msg))
			if len(logged) != 1 {
				t.Fatalf("log lines %q at %v = %d, want 1", tt.msg, tt.level, len(logged))
			}
			if err := logged[0].Attrs["err"]; tt.logsErr && !strings.Contains(err, itoa64(int64(tt.code))) {
				t.Errorf("the log line's err does not name the code %d: %q", tt.code, err)
			}
			if n := len(h.tg.RequestsFor("getUpdates")); n != 1 {
				t.Errorf("getUpdates calls during the back-off = %d, want 1", n)
			}

			close(release)
			h.tg.SendText(userID, userID, "still there?")
			h.waitText(userID, "answer to still there?")
		})
	}
}

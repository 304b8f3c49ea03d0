package chat

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// errKilled is what a host cut off by a simulated kill gets for every Bot
// API request.
var errKilled = errors.New("crash test: the process was killed")

// killSwitch is the HTTP transport of a host that can be killed: once
// dead, nothing it sends or receives crosses it. answered, when set, runs
// once a request was applied by the server, before its answer is read: a
// kill there leaves the request done and its answer unread.
type killSwitch struct {
	dead     atomic.Bool
	next     http.RoundTripper
	answered func()
}

func (k *killSwitch) RoundTrip(r *http.Request) (*http.Response, error) {
	if k.dead.Load() {
		return nil, errKilled
	}
	resp, err := k.next.RoundTrip(r)
	if err == nil && k.answered != nil {
		k.answered()
	}
	if k.dead.Load() {
		if resp != nil {
			resp.Body.Close()
		}
		return nil, errKilled
	}
	return resp, err
}

// generation is one run of the bot in the crash test: it starts from
// agentDir (the journal a kill left there), and is killed, its journal
// then copied into next, at call killAt of its journal hook (two calls a
// write: before, after), or once the answer of its Bot API request number
// killAtRequest came back; neither set, it is not killed.
type generation struct {
	agentDir, next        string
	killAt, killAtRequest int
	// failSends is how many of its first sendMessage requests Telegram
	// answers 502.
	failSends int
	// killAfterJob kills it once the user's scheduled prompt was taken.
	killAfterJob bool
}

func (g generation) String() string {
	if g.killAtRequest > 0 {
		return fmt.Sprintf("killed at Bot API request %d", g.killAtRequest)
	}
	return fmt.Sprintf("killed at call %d of the journal hook", g.killAt)
}

// crashRun runs generations of the bot in turn against one fake Telegram
// and one user, and reports whether each kill came (a kill point past the
// writes a generation makes never comes).
func crashRun(t *testing.T, u *crashUser, gens []generation) (killed []bool) {
	t.Helper()
	for gi, g := range gens {
		ks := &killSwitch{next: &http.Transport{}}
		dead := make(chan struct{})
		var calls, requests int
		var mu sync.Mutex
		// kill keeps what the disk holds now, as a SIGKILL would leave it
		// (an append being written may leave a torn last line), and cuts
		// the host off.
		kill := func() {
			data, err := os.ReadFile(filepath.Join(g.agentDir, ledger.File))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Errorf("reading the journal at the kill: %v", err)
			}
			if err == nil {
				if err := os.WriteFile(filepath.Join(g.next, ledger.File), data, 0o600); err != nil {
					t.Errorf("keeping the journal at the kill: %v", err)
				}
			}
			ks.dead.Store(true)
			close(dead)
		}
		hook := func(bool) {
			mu.Lock()
			defer mu.Unlock()
			if calls++; calls == g.killAt {
				kill()
			}
		}
		ks.answered = func() {
			mu.Lock()
			defer mu.Unlock()
			if requests++; requests == g.killAtRequest {
				kill()
			}
		}
		if g.failSends > 0 {
			u.tg.FailNext("sendMessage", g.failSends, 502, "Bad Gateway", 0)
		}
		faux := agenttest.NewFauxProvider()
		var host atomic.Pointer[Host]
		job := u.job
		if gi > 0 {
			job = nil // the scheduler fired it once, into the first generation
		}
		faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
			if job != nil && lastUserText(req) == "crash m1" {
				// The harness holds the host a moment after it starts (a
				// turn's goroutine: no t.Fatal here).
				for deadline := time.Now().Add(15 * time.Second); host.Load() == nil && time.Now().Before(deadline); {
					time.Sleep(time.Millisecond)
				}
				u.fire(t, host.Load(), *job, g.next, dead)
				job = nil
				if g.killAfterJob {
					mu.Lock()
					if !isClosed(dead) {
						kill()
					}
					mu.Unlock()
				}
			}
			return ranUserText(ctx, req, onText)
		})
		h := newHarness(t, harnessConfig{provider: faux, tg: u.tg, agentDir: g.agentDir, opts: []Option{
			withReportPause(5 * time.Millisecond),
			withHTTPClient(&http.Client{Transport: ks}),
			withRetryPolicy(botapi.RetryPolicy{Attempts: 3, BaseDelay: 5 * time.Millisecond, MaxDelay: 50 * time.Millisecond}),
			withJournal(ledger.WithHook(hook), ledger.CompactAfter(2)),
			WithTranscriber(wordsTranscriber{}),
		}})
		host.Store(h.host)
		// A new start is where a user who was told of an interrupted
		// message, and whose /retry a kill may have eaten, says it again.
		u.retries = 0
		for !isClosed(dead) {
			// What the chat shows is taken before the user looks at it,
			// so that a change in between wakes the wait below.
			seen := chatState(u.tg)
			if u.act() {
				break
			}
			ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
			go func() {
				select {
				case <-dead:
					cancel()
				case <-ctx.Done():
				}
			}()
			err := u.tg.WaitUntil(ctx, func() bool { return chatState(u.tg) != seen })
			cancel()
			if err != nil && !isClosed(dead) {
				t.Fatalf("generation %d (to be %v): nothing happens, and messages are left without an outcome:%s", gi+1, g, u.describe(u.outcomes()))
			}
		}
		// Every message has its outcome, or the kill came. A kill point
		// not reached yet may still come in what the host writes while it
		// shuts down.
		h.stop()
		wasKilled := isClosed(dead)
		killed = append(killed, wasKilled)
		if !wasKilled {
			break
		}
	}
	checkCrashOutcomes(t, u)
	t.Logf("generations killed %v; outcomes:%s", killed, u.describe(u.outcomes()))
	return killed
}

// fire fires the scheduled prompt j into the host h (nil: the harness
// never held it), as its scheduler would, and keeps it
// among the jobs to check when the bot took it: Prompt returned nil, and
// a kill that came meanwhile (dead) left it in the journal copied to next.
// One that a kill cut off before it was journaled was never taken: the
// dead process never told its scheduler it was.
func (u *crashUser) fire(t *testing.T, h *Host, j crashJob, next string, dead chan struct{}) {
	if h == nil {
		t.Errorf("the harness never held its host")
		return
	}
	if err := h.Prompt(context.Background(), target{chatID: userID}.String(), j.label, j.text); err != nil {
		if !isClosed(dead) {
			t.Errorf("Prompt: %v", err)
		}
		return
	}
	if isClosed(dead) {
		data, err := os.ReadFile(filepath.Join(next, ledger.File))
		if err != nil || !strings.Contains(string(data), j.text) {
			return
		}
	}
	u.mu.Lock()
	u.jobs = append(u.jobs, j)
	u.mu.Unlock()
}

// chatState is what the user's chat shows, every message whole.
func chatState(tg *telegramtest.Server) string {
	var b strings.Builder
	for _, m := range tg.Messages(userID) {
		fmt.Fprintf(&b, "%d %d %q\n", m.ID, m.ReplyTo, m.Visible)
	}
	return b.String()
}

func isClosed(c chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// checkCrashOutcomes fails the test for a message answered twice, left
// without an outcome, or reported as interrupted after it was answered.
func checkCrashOutcomes(t *testing.T, u *crashUser) {
	t.Helper()
	os := u.outcomes()
	for i, o := range os {
		w := u.name(i)
		switch {
		case o.answers > 1:
			t.Errorf("%q was answered %d times:%s", w, o.answers, u.describe(os))
		case !o.final():
			t.Errorf("%q has no outcome:%s", w, u.describe(os))
		case o.answers > 0 && o.lastReport > o.firstAnswer:
			t.Errorf("%q was reported as interrupted after its answer:%s", w, u.describe(os))
		}
	}
	if u.help && countVisible(u.tg.Messages(userID), helpIntro[:30]) == 0 {
		t.Errorf("/help was not answered:%s", u.describe(os))
	}
}

package chat

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
	"github.com/volcanic/telegram-agent/internal/tmpfstest"
)

// The tests here hold a scheduled prompt to what a message is promised:
// journaled before the scheduler is told it was taken, reported after a
// restart that cut it, and run again, once, by /retry.

// pendingPrompts returns the scheduled prompts' entries pending in dir's
// journal.
func pendingPrompts(t *testing.T, dir string) []ledger.Entry {
	t.Helper()
	var out []ledger.Entry
	for _, e := range pendingEntries(t, dir) {
		if e.Origin.IsPrompt() {
			out = append(out, e)
		}
	}
	return out
}

// A scheduled prompt that a restart (SIGTERM) cuts, while it runs or while
// it waits behind a running message, is reported after the restart, in
// words for a job, and /retry runs it again once, labelled, after the
// message that came before it.
func TestScheduledPromptCutByARestartIsReportedAndRetried(t *testing.T) {
	const label, text = "⏰ Job plants", "check the plants"
	for _, tc := range []struct {
		name string
		// behind queues the prompt behind a running message.
		behind bool
	}{
		{name: "running", behind: false},
		{name: "queued behind a message", behind: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tg := telegramtest.New(t)
			agentDir, ws := t.TempDir(), t.TempDir()
			blocked := agenttest.NewFauxProvider(agenttest.FauxFunc(waitForCancel))
			h1 := newHarness(t, harnessConfig{provider: blocked, tg: tg, agentDir: agentDir, workspace: ws})
			if tc.behind {
				tg.SendText(userID, userID, "the message first")
				waitFor(t, "the message's turn", func() bool { return len(blocked.Requests()) == 1 })
			}
			if err := h1.host.Prompt(t.Context(), "1001", label, text); err != nil {
				t.Fatalf("Prompt: %v", err)
			}
			// Journaled before Prompt returned: a kill now loses nothing.
			if got := pendingPrompts(t, agentDir); len(got) != 1 || got[0].Label != label || got[0].Prompt != text || got[0].Scope != "1001" {
				t.Fatalf("the journal's pending prompts after Prompt: %+v, want the one prompt", got)
			}
			if !tc.behind {
				waitFor(t, "the prompt's turn", func() bool { return len(blocked.Requests()) == 1 })
			}
			h1.stop()
			notices := countVisible(tg.Messages(userID), "The bot is restarting; the scheduled job “"+label+"” was interrupted")
			if want := map[bool]int{false: 1, true: 0}[tc.behind]; notices != want {
				t.Errorf("%d restarting notices for the job, want %d: %s", notices, want, describe(tg.Messages(userID)))
			}

			faux := agenttest.NewFauxProvider()
			faux.Handle(ranUserText)
			h2 := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: agentDir, workspace: ws})
			report := h2.waitText(userID, "The scheduled job “"+label+"” was interrupted by a restart; say /retry to run it again.")
			if report.ReplyTo != 0 {
				t.Errorf("the job's report replies to message %d: it has none", report.ReplyTo)
			}
			if tc.behind {
				h2.waitText(userID, "This message was interrupted by a restart")
			}
			tg.SendText(userID, userID, "/retry")
			answer := h2.waitText(userID, "ran: "+text)
			if diff := cmp.Diff(label+"\n\nran: "+text, answer.Visible); diff != "" {
				t.Errorf("the retried prompt's answer (-want +got):\n%s", diff)
			}
			if tc.behind {
				first := h2.waitText(userID, "ran: the message first")
				if first.ID > answer.ID {
					t.Errorf("/retry ran the prompt before the message that came first: %s", describe(tg.Messages(userID)))
				}
			}
			h2.stop()
			msgs := tg.Messages(userID)
			if n := countVisible(msgs, "ran: "+text); n != 1 {
				t.Errorf("the prompt was answered %d times, want once: %s", n, describe(msgs))
			}
			if n := countVisible(msgs, "“"+label+"” was interrupted by a restart"); n != 1 {
				t.Errorf("the prompt was reported %d times, want once: %s", n, describe(msgs))
			}
			if got := pendingEntries(t, agentDir); len(got) != 0 {
				t.Errorf("%d entries left pending after the retry: %+v", len(got), got)
			}
		})
	}
}

// A prompt the chat's queue refuses (full, or one of the same job still
// waiting) leaves no journal entry behind: reported after a restart, it
// would run a prompt the scheduler was told was not taken.
func TestRefusedPromptLeavesNoJournalEntry(t *testing.T) {
	blocked := agenttest.NewFauxProvider()
	blocked.Handle(waitForCancel)
	h := newHarness(t, harnessConfig{provider: blocked})
	fillQueue(t, h, blocked)
	before := pendingPrompts(t, h.agentDir)
	if len(before) != maxQueued+1 {
		t.Fatalf("%d prompts pending, want the running one and the %d queued", len(before), maxQueued)
	}
	for _, tc := range []struct {
		label string
		want  error
	}{
		{label: "⏰ Job one too many", want: errQueueFull},
		{label: "⏰ Job filler 3", want: errQueueFull},
	} {
		if err := h.host.Prompt(t.Context(), "1001", tc.label, "refused"); !errors.Is(err, tc.want) {
			t.Errorf("Prompt(%q) = %v, want %v", tc.label, err, tc.want)
		}
	}
	// Room for one more, so that the same job's refusal is the label's.
	h.tg.SendText(userID, userID, "/stop")
	h.waitText(userID, "dropped 20 queued messages")
	// A turn running again, so that the job's first prompt waits behind
	// it whether or not the stopped turn has ended yet.
	if err := h.host.Prompt(t.Context(), "1001", "⏰ Job holding", "holding"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the holding prompt's turn", func() bool { return len(blocked.Requests()) == 2 })
	if err := h.host.Prompt(t.Context(), "1001", "⏰ Job waiting", "first"); err != nil {
		t.Fatal(err)
	}
	if err := h.host.Prompt(t.Context(), "1001", "⏰ Job waiting", "second"); !errors.Is(err, errPromptWaiting) {
		t.Errorf("a second prompt of a waiting job: %v, want %v", err, errPromptWaiting)
	}
	waitFor(t, "the dropped prompts to be done", func() bool { return len(pendingPrompts(t, h.agentDir)) <= 2 })
	for _, e := range pendingPrompts(t, h.agentDir) {
		if e.Prompt == "refused" || e.Prompt == "second" {
			t.Errorf("a refused prompt is pending in the journal: %q", e.Label)
		}
	}
}

// /stop drops the queued scheduled prompts as it drops queued messages:
// their journal entries are done once the chat was told, so that no
// restart reports them as interrupted.
func TestStopMarksDroppedPromptsDone(t *testing.T) {
	tg := telegramtest.New(t)
	agentDir, ws := t.TempDir(), t.TempDir()
	h1 := heldChat(t, harnessConfig{tg: tg, agentDir: agentDir, workspace: ws})
	for _, label := range []string{"⏰ Job a", "⏰ Job b"} {
		if err := h1.host.Prompt(t.Context(), "1001", label, "dropped"); err != nil {
			t.Fatal(err)
		}
	}
	tg.SendText(userID, userID, "/stop")
	h1.waitText(userID, "Stopped the running turn and dropped 2 queued messages")
	waitFor(t, "the dropped prompts to be done", func() bool { return len(pendingEntries(t, agentDir)) == 0 })
	h1.stop()

	h2 := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider(), tg: tg, agentDir: agentDir, workspace: ws})
	tg.SendText(userID, userID, "/retry")
	h2.waitText(userID, "Nothing to retry")
	if n := countVisible(tg.Messages(userID), "” was interrupted by a restart"); n != 0 {
		t.Errorf("a dropped prompt was reported as interrupted: %s", describe(tg.Messages(userID)))
	}
}

// A prompt that cannot be journaled (the agent dir's disk is full) is not
// taken: Prompt fails with the cause, for the scheduler to record and
// tell, and nothing runs; with space again, it is taken.
func TestPromptOnFullDisk(t *testing.T) {
	d := tmpfstest.Mount(t, 1<<20)
	faux := agenttest.NewFauxProvider()
	faux.Handle(ranUserText)
	h := newHarness(t, harnessConfig{provider: faux, agentDir: d.Dir})
	h.tg.SendText(userID, userID, "hello")
	h.waitText(userID, "ran: hello")
	d.Fill()
	// Long enough that its journal line needs a page of its own.
	text := "remind me " + strings.Repeat("x", os.Getpagesize())
	err := h.host.Prompt(t.Context(), "1001", "⏰ Job full", text)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Prompt on a full disk = %v, want an error wrapping ENOSPC", err)
	}
	if strings.Contains(err.Error(), text) {
		t.Errorf("Prompt's error quotes the prompt")
	}
	if w := h.host.existingWorker(target{chatID: userID}); w != nil {
		if _, queued := w.snapshot(); queued != 0 {
			t.Errorf("%d items queued after the refused prompt", queued)
		}
	}
	d.Drain()
	if err := h.host.Prompt(t.Context(), "1001", "⏰ Job full", "remind me now"); err != nil {
		t.Fatalf("Prompt with space again: %v", err)
	}
	h.waitText(userID, "ran: remind me now")
	if n := countVisible(h.tg.Messages(userID), "ran: remind me x"); n != 0 {
		t.Errorf("the prompt refused on the full disk ran")
	}
}

// heldAnswers is an HTTP transport that holds every sendMessage whose
// body contains text until its request ends: an answer being delivered
// when the shutdown comes.
type heldAnswers struct {
	text string
	held chan struct{}
}

func (h *heldAnswers) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/sendMessage") && r.Body != nil {
		body, err := io.ReadAll(r.Body)
		r.Body.Close()
		if err != nil {
			return nil, err
		}
		if strings.Contains(string(body), h.text) {
			select {
			case h.held <- struct{}{}:
			default:
			}
			<-r.Context().Done()
			return nil, r.Context().Err()
		}
		r.Body = io.NopCloser(strings.NewReader(string(body)))
	}
	return http.DefaultTransport.RoundTrip(r)
}

// The restarting notice goes to a chat whose turn the shutdown cuts, and
// not to one whose answer was going out (marked answering): that chat was
// answered, and a delivery the shutdown cut is reported after the restart
// as maybe cut short.
func TestRestartNoticeOnlyForTurnsNotAnswered(t *testing.T) {
	const group = int64(-100500)
	tg := telegramtest.New(t)
	agentDir, ws := t.TempDir(), t.TempDir()
	faux := agenttest.NewFauxProvider()
	faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		if lastUserText(req) == "answer me" {
			return agent.Response{Text: "the answer being sent"}, nil
		}
		return waitForCancel(ctx, req, onText)
	})
	held := &heldAnswers{text: "the answer being sent", held: make(chan struct{}, 1)}
	h1 := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: agentDir, workspace: ws, opts: []Option{
		withHTTPClient(&http.Client{Transport: held}),
	}})
	tg.SendText(userID, userID, "answer me")
	waitClosedOrHeld(t, held.held)
	if err := h1.host.Prompt(t.Context(), itoa64(group), "⏰ Job mid-turn", "hold the group"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the group's prompt to reach the model", func() bool { return len(faux.Requests()) == 2 })
	h1.stop()
	if msgs := tg.Messages(userID); countVisible(msgs, "restarting") != 0 {
		t.Errorf("the chat whose answer was going out was told its turn was interrupted: %s", describe(msgs))
	}
	if msgs := tg.Messages(group); countVisible(msgs, "⚠️ The bot is restarting; the scheduled job “⏰ Job mid-turn” was interrupted.") != 1 {
		t.Errorf("the group whose prompt ran got no notice worded for the job: %s", describe(msgs))
	}

	again := agenttest.NewFauxProvider()
	again.Handle(ranUserText)
	h2 := newHarness(t, harnessConfig{provider: again, tg: tg, agentDir: agentDir, workspace: ws})
	h2.waitText(userID, "while the answer to this message was being sent")
	waitChat(t, tg, "the group's report", func([]telegramtest.Message) bool {
		return countVisible(tg.Messages(group), "“⏰ Job mid-turn” was interrupted by a restart") == 1
	})
	if msgs := tg.Messages(userID); countVisible(msgs, "This message was interrupted") != 0 {
		t.Errorf("the answered message was reported as interrupted: %s", describe(msgs))
	}
}

// waitClosedOrHeld waits for a signal on held (15 s hang guard).
func waitClosedOrHeld(t *testing.T, held chan struct{}) {
	t.Helper()
	select {
	case <-held:
	case <-time.After(15 * time.Second):
		t.Fatal("the answer was never sent")
	}
}

// A turn the user stopped that is still ending when the bot stops gets no
// restart notice, and is not reported after the restart: /stop answered
// it, and told it was interrupted it would stay pending, to be reported
// and run again by /retry though the user stopped it.
func TestStoppedTurnIsNotInterruptedByARestart(t *testing.T) {
	tg := telegramtest.New(t)
	agentDir, ws := t.TempDir(), t.TempDir()
	release := make(chan struct{})
	faux := agenttest.NewFauxProvider()
	faux.Handle(func(ctx context.Context, _ agent.Request, _ func(string)) (agent.Response, error) {
		<-ctx.Done()
		// The stopped turn ends only once the shutdown is under way.
		<-release
		return agent.Response{}, ctx.Err()
	})
	h1 := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: agentDir, workspace: ws})
	tg.SendText(userID, userID, "a long job")
	waitFor(t, "the turn to reach the model", func() bool { return len(faux.Requests()) == 1 })
	tg.SendText(userID, userID, "/stop")
	waitFor(t, "the turn to be stopped", func() bool {
		w := h1.host.existingWorker(target{chatID: userID})
		w.mu.Lock()
		defer w.mu.Unlock()
		return w.stopped
	})
	go func() {
		// The shutdown decides whom to tell under the host's lock, with
		// closing set: once closing is seen, the decision was made.
		defer close(release)
		for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
			h1.host.mu.Lock()
			closing := h1.host.closing
			h1.host.mu.Unlock()
			if closing {
				return
			}
		}
	}()
	h1.stop()
	if msgs := tg.Messages(userID); countVisible(msgs, "restarting") != 0 {
		t.Errorf("the stopped turn was told the restart interrupted it: %s", describe(msgs))
	}

	again := agenttest.NewFauxProvider()
	again.Handle(ranUserText)
	h2 := newHarness(t, harnessConfig{provider: again, tg: tg, agentDir: agentDir, workspace: ws})
	if _, left := h2.host.journal.TakeInterrupted(itoa64(userID), 0); left != 0 {
		t.Errorf("the stopped turn is interrupted in the journal after the restart (%d entries)", left)
	}
	tg.SendText(userID, userID, "/retry")
	h2.waitText(userID, "Nothing to retry")
}

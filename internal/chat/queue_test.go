package chat

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// A chat's queue holds at most maxQueued items, and a scheduled prompt is
// not queued again while one of the same job waits.
func TestEnqueueLimits(t *testing.T) {
	msg := func() *workItem { return &workItem{kind: itemMessage} }
	prompt := func(label string) *workItem { return &workItem{kind: itemPrompt, label: label} }
	fill := func(n int) []*workItem {
		q := make([]*workItem, n)
		for i := range q {
			q[i] = msg()
		}
		return q
	}
	tests := []struct {
		name    string
		queue   []*workItem
		item    *workItem
		wantErr error
		wantLen int
	}{
		{"a message into an empty queue", nil, msg(), nil, 1},
		{"the last free place", fill(maxQueued - 1), msg(), nil, maxQueued},
		{"a message into a full queue", fill(maxQueued), msg(), errQueueFull, maxQueued},
		{"a prompt into a full queue", fill(maxQueued), prompt("⏰ Job a"), errQueueFull, maxQueued},
		{"a /new into a full queue", fill(maxQueued), &workItem{kind: itemNew}, errQueueFull, maxQueued},
		{"a prompt while the same job's waits", []*workItem{prompt("⏰ Job a")}, prompt("⏰ Job a"), errPromptWaiting, 1},
		{"a prompt while another job's waits", []*workItem{prompt("⏰ Job a")}, prompt("⏰ Job b"), nil, 2},
		{"a message while a prompt waits", []*workItem{prompt("⏰ Job a")}, msg(), nil, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := &chatWorker{queue: tt.queue, wake: make(chan struct{}, 1)}
			_, queued, err := w.enqueue(tt.item)
			if !errors.Is(err, tt.wantErr) {
				t.Errorf("enqueue error = %v, want %v", err, tt.wantErr)
			}
			if queued != len(tt.queue) {
				t.Errorf("enqueue reported %d queued, want %d", queued, len(tt.queue))
			}
			if diff := cmp.Diff(tt.wantLen, len(w.queue)); diff != "" {
				t.Errorf("queue length (-want +got):\n%s", diff)
			}
		})
	}
}

// While a turn hangs, a message beyond the queue's limit gets the busy
// answer and is not queued, and the scheduler's Prompt fails for a job
// whose prompt still waits.
func TestFullQueueRefuses(t *testing.T) {
	release := make(chan struct{})
	faux := agenttest.NewFauxProvider()
	faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		select {
		case <-release:
		case <-ctx.Done():
		}
		return agent.Response{Text: "done"}, nil
	})
	h := newHarness(t, harnessConfig{provider: faux})
	defer close(release)
	scope := target{chatID: userID}.String()
	if err := h.host.Prompt(t.Context(), scope, "⏰ Job a", "first"); err != nil {
		t.Fatalf("the first prompt: %v", err)
	}
	waitFor(t, "the first prompt's turn", func() bool { return len(faux.Requests()) == 1 })
	if err := h.host.Prompt(t.Context(), scope, "⏰ Job a", "second"); err != nil {
		t.Fatalf("a prompt behind the running one of its job: %v", err)
	}
	if err := h.host.Prompt(t.Context(), scope, "⏰ Job a", "third"); !errors.Is(err, errPromptWaiting) {
		t.Errorf("a third prompt of the same job: %v, want errPromptWaiting", err)
	}
	w := h.host.existingWorker(target{chatID: userID})
	for i := 0; ; i++ {
		if _, queued := w.snapshot(); queued >= maxQueued {
			break
		}
		if err := h.host.Prompt(t.Context(), scope, "⏰ Job filler "+itoa64(int64(i)), "filler"); err != nil {
			t.Fatal(err)
		}
	}
	h.tg.SendText(userID, userID, "one more")
	h.waitText(userID, "I'm still busy with 20 queued messages, so I did not take this one: send it again once they are done, or /stop.")
	if _, queued := w.snapshot(); queued != maxQueued {
		t.Errorf("queued = %d, want %d", queued, maxQueued)
	}
	if err := h.host.Prompt(t.Context(), scope, "⏰ Job b", "late"); !errors.Is(err, errQueueFull) {
		t.Errorf("a prompt into the full queue: %v, want errQueueFull", err)
	}
}

// Chats run in parallel: while a private chat's turn is blocked in the
// model, a group's turn, and another topic's in a forum group, runs to its
// answer.
func TestChatsRunInParallel(t *testing.T) {
	tests := []struct {
		name string
		// first and second are where the blocked and the other turn run.
		first, second target
	}{
		{"a private chat and a group", target{chatID: userID}, target{chatID: -900}},
		{"two topics of a forum group", target{chatID: -700, threadID: 5}, target{chatID: -700, threadID: 9}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			started, release := make(chan struct{}), make(chan struct{})
			faux := agenttest.NewFauxProvider(blockedAnswer(started, release))
			faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
				return agent.Response{Text: "answer to " + lastUserText(req)}, nil
			})
			h := newHarness(t, harnessConfig{provider: faux})
			h.tg.SetChat(modelsChat(-700, true))
			send := func(at target, text string) {
				if at.chatID < 0 {
					text = "@" + h.tg.BotUser().Username + " " + text
				}
				var opts []telegramtest.MessageOption
				if at.threadID != 0 {
					opts = append(opts, telegramtest.InThread(at.threadID))
				}
				h.tg.SendText(at.chatID, userID, text, opts...)
			}
			send(tt.first, "slow")
			waitClosed(t, "the first turn to reach the model", started)
			send(tt.second, "quick")
			m := h.waitText(tt.second.chatID, "answer to quick")
			if m.ThreadID != tt.second.threadID {
				t.Errorf("the answer went to topic %d, want %d", m.ThreadID, tt.second.threadID)
			}
			close(release)
			h.waitText(tt.first.chatID, "answer to slow")
		})
	}
}

// A scheduled prompt (Host.Prompt) arriving while a turn runs waits behind
// it, runs after it, and its answer is marked with the job's label.
func TestPromptWaitsForTheRunningTurn(t *testing.T) {
	started, release := make(chan struct{}), make(chan struct{})
	var early atomic.Bool
	faux := agenttest.NewFauxProvider(blockedAnswer(started, release))
	faux.Handle(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		select {
		case <-release:
		default:
			early.Store(true)
		}
		return agent.Response{Text: "answer to " + lastUserText(req)}, nil
	})
	h := newHarness(t, harnessConfig{provider: faux})
	h.tg.SendText(userID, userID, "one")
	waitClosed(t, "the message's turn to reach the model", started)
	if err := h.host.Prompt(t.Context(), "1001", "⏰ Daily check", "check the plants"); err != nil {
		t.Fatalf("Prompt: %v", err)
	}
	w := h.host.existingWorker(target{chatID: userID})
	if w == nil {
		t.Fatal("the chat has no worker")
	}
	running, queued := w.snapshot()
	if running == nil || running.kind != itemMessage || queued != 1 {
		t.Errorf("the prompt is not queued behind the running message: running %v, %d queued", running != nil, queued)
	}
	close(release)
	labelled := h.waitText(userID, "answer to check the plants")
	if early.Load() {
		t.Errorf("the prompt's turn started while the message's turn ran")
	}
	if diff := cmp.Diff("⏰ Daily check\n\nanswer to check the plants", labelled.Visible); diff != "" {
		t.Errorf("the prompt's answer (-want +got):\n%s", diff)
	}
	var answers []string
	for _, m := range h.tg.Messages(userID) {
		if m.ID == labelled.ID || m.Visible == "answer to one" {
			answers = append(answers, m.Visible)
		}
	}
	if want := []string{"answer to one", labelled.Visible}; !slices.Equal(want, answers) {
		t.Errorf("the answers came in the wrong order: %q", answers)
	}
}

// A message refused by a full queue counts as handled only once the chat
// was told: when the busy answer cannot be sent, the message stays pending
// in the journal and is reported as interrupted after the restart, rather
// than lost without a word.
func TestRefusedMessageIsReportedWhenTheBusyAnswerFails(t *testing.T) {
	blocked := agenttest.NewFauxProvider()
	blocked.Handle(waitForCancel)
	tg := telegramtest.New(t)
	agentDir, ws := t.TempDir(), t.TempDir()
	h1 := newHarness(t, harnessConfig{provider: blocked, tg: tg, agentDir: agentDir, workspace: ws})
	fillQueue(t, h1, blocked)
	tg.FailNext("sendMessage", 1, 400, "Bad Request: message thread not found", 0)
	refused := tg.SendText(userID, userID, "one too many")
	waitFor(t, "the busy answer to be tried", func() bool {
		return len(tg.RequestsContaining("so I did not take this one")) > 0
	})
	h1.stop()

	faux := agenttest.NewFauxProvider()
	faux.Handle(ranUserText)
	h2 := newHarness(t, harnessConfig{provider: faux, tg: tg, agentDir: agentDir, workspace: ws})
	report := h2.waitText(userID, "This message was interrupted by a restart")
	if report.ReplyTo != refused.ID {
		t.Errorf("the report replies to %d, want the refused message %d", report.ReplyTo, refused.ID)
	}
	// The prompts that filled the queue were interrupted too, and came
	// first: /retry runs as many as the queue takes, the message last.
	h2.waitMessages(userID, "a report of each prompt", func(ms []telegramtest.Message) bool {
		return countVisible(ms, "” was interrupted by a restart") == maxQueued+1
	})
	tg.SendText(userID, userID, "/retry")
	h2.waitMessages(userID, "the oldest prompts run again", func(ms []telegramtest.Message) bool {
		return countVisible(ms, "ran: running")+countVisible(ms, "ran: filler") == maxQueued
	})
	tg.SendText(userID, userID, "/retry")
	h2.waitText(userID, "ran: one too many")
}

// The busy answer to a refused message that Telegram does not take for a
// while (5xx answers, one after the other) goes out once it does, while
// the bot runs, and only then is the message done.
func TestBusyAnswerIsSentOnceTelegramTakesIt(t *testing.T) {
	blocked := agenttest.NewFauxProvider()
	blocked.Handle(waitForCancel)
	h := newHarness(t, harnessConfig{provider: blocked, opts: []Option{withReportPause(10 * time.Millisecond)}})
	fillQueue(t, h, blocked)
	const failures = 12
	h.tg.FailNext("sendMessage", failures, 502, "Bad Gateway", 0)
	refused := h.tg.SendText(userID, userID, "one too many")
	busy := h.waitText(userID, "so I did not take this one")
	if busy.ReplyTo != refused.ID {
		t.Errorf("the busy answer replies to %d, want %d", busy.ReplyTo, refused.ID)
	}
	// The prompts that fill the queue stay pending while they wait.
	waitFor(t, "the refused message to be done", func() bool { return len(pendingMessages(t, h.agentDir)) == 0 })
}

// fillQueue starts a scheduled prompt's turn, which blocked holds, and
// queues prompts behind it until the user's chat's queue is full.
func fillQueue(t *testing.T, h *harness, blocked *agenttest.FauxProvider) {
	t.Helper()
	scope := target{chatID: userID}.String()
	if err := h.host.Prompt(t.Context(), scope, "⏰ Job running", "running"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the prompt's turn", func() bool { return len(blocked.Requests()) == 1 })
	w := h.host.existingWorker(target{chatID: userID})
	for i := 0; ; i++ {
		if _, queued := w.snapshot(); queued >= maxQueued {
			break
		}
		if err := h.host.Prompt(t.Context(), scope, "⏰ Job filler "+itoa64(int64(i)), "filler"); err != nil {
			t.Fatal(err)
		}
	}
}

package chat

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
	"github.com/volcanic/telegram-agent/internal/chat/turnview"
)

// itemKind says what a queued work item does.
type itemKind int

const (
	// itemMessage is a user's message (text or attachment): a turn.
	itemMessage itemKind = iota
	// itemPrompt is a scheduled prompt: a turn whose answer is labelled.
	itemPrompt
	// itemNew starts a fresh session (/new), in order with the turns.
	itemNew
	// itemCompact compacts the session (/compact), in order with the turns.
	itemCompact
)

// workItem is one entry of a chat's queue.
type workItem struct {
	kind    itemKind
	in      *inbound
	label   string
	content []agent.Content
	// origin is the inbound journal entry the item finishes (zero: none).
	origin ledger.Origin
	// state is where the item stands (see ledger.State): queued when it
	// is a turn, received when it is a command of the journal's; the
	// shutdown makes a running turn interrupted (chatWorker.interrupt),
	// markAnswered makes it answering, and its delivery answered or, when
	// Telegram did not take it, refused (chatWorker.undelivered). Guarded by the
	// worker's mu, as the shutdown may read it.
	state ledger.State
	// turnID identifies the item while it runs (set when it starts): its
	// Stop button carries it, so that a stale button stops nothing else.
	turnID string
	// tool is the tool call the running turn waits for, for /status;
	// guarded by the worker's mu.
	tool toolActivity
}

// toolActivity is a tool call in progress: its id, the tool, its main
// argument in short (redacted) and when it started.
type toolActivity struct {
	callID, name, arg string
	since             time.Time
}

// trackTool records the tool calls of it as they start and end, for
// /status.
func (w *chatWorker) trackTool(it *workItem, ev agent.Event) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch ev.Kind {
	case agent.EventToolStart:
		arg := turnview.SummarizeArgs(ev.Arguments) // the agent redacted them, decoded too
		it.tool = toolActivity{callID: ev.ToolCallID, name: ev.ToolName, arg: arg, since: time.Now()}
	case agent.EventToolEnd:
		if it.tool.callID == ev.ToolCallID {
			it.tool = toolActivity{}
		}
	}
}

// newTurnID returns a random id for a running item: eight hex digits, so
// that the ids of turns before a restart do not come round again after it.
func newTurnID() string {
	return fmt.Sprintf("%08x", rand.Uint32())
}

// chatWorker runs one chat's items one at a time, in order.
type chatWorker struct {
	h      *Host
	target target

	mu      sync.Mutex
	queue   []*workItem
	running *workItem
	cancel  context.CancelFunc
	stopped bool // the running turn was cancelled by /stop
	closed  bool
	wake    chan struct{}
	// queuedNotice is the "⏳ Queued" notice of the messages waiting
	// behind the running item, edited as more arrive; 0 when there is
	// none (the next item to start forgets it).
	queuedNotice int
}

// worker returns target's worker, starting it when needed.
func (h *Host) worker(t target) (*chatWorker, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closing {
		return nil, errors.New("chat: the host is shutting down")
	}
	key := t.String()
	w := h.chats[key]
	if w == nil {
		w = &chatWorker{h: h, target: t, wake: make(chan struct{}, 1)}
		h.chats[key] = w
		h.workers.Go(w.loop)
	}
	return w, nil
}

// existingWorker returns target's worker, or nil when it has none.
func (h *Host) existingWorker(t target) *chatWorker {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.chats[t.String()]
}

// maxQueued bounds a chat's queue: while a turn hangs, messages and
// scheduled prompts must not pile up without end.
const maxQueued = 20

// errQueueFull is what enqueue returns when the chat's queue is full.
var errQueueFull = errors.New("chat: the chat's queue is full")

// errPromptWaiting is what enqueue returns for a scheduled prompt while
// one of the same job (label) is still waiting.
var errPromptWaiting = errors.New("chat: a prompt of this job is already waiting in the chat's queue")

// enqueue appends it and reports whether it has to wait behind a running
// turn or other queued items, and how many items were queued before it. It
// refuses it (errQueueFull) when maxQueued items wait already, and a
// scheduled prompt (errPromptWaiting) while one with the same label waits.
func (w *chatWorker) enqueue(it *workItem) (waits bool, queued int, err error) {
	return w.enqueueWith(it, nil)
}

// enqueueWith is enqueue that runs before, when set, once the queue's
// limits took it and before it is queued, with the worker locked: its
// error refuses it. A scheduled prompt is journaled there, so that no
// moment exists where the journal holds a prompt the queue refused, or the
// queue runs one the journal does not hold.
func (w *chatWorker) enqueueWith(it *workItem, before func() error) (waits bool, queued int, err error) {
	w.mu.Lock()
	queued = len(w.queue)
	if queued >= maxQueued {
		w.mu.Unlock()
		return false, queued, errQueueFull
	}
	if it.scheduled() {
		for _, q := range w.queue {
			if q.kind == itemPrompt && q.label == it.label {
				w.mu.Unlock()
				return false, queued, errPromptWaiting
			}
		}
	}
	if before != nil {
		if err := before(); err != nil {
			w.mu.Unlock()
			return false, queued, err
		}
	}
	waits = w.running != nil || queued > 0
	w.queue = append(w.queue, it)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return waits, queued, nil
}

// scheduled reports whether it is a scheduled prompt the scheduler just
// ran: the journal does not hold it yet (enqueueWith's before journals
// it). A prompt /retry runs again is journaled already: the user asked for
// it, so a waiting prompt of the same job does not refuse it.
func (it *workItem) scheduled() bool { return it.kind == itemPrompt && it.origin.IsZero() }

// busyText is the answer to a message that does not fit the chat's queue
// of n items.
func busyText(n int) string {
	return fmt.Sprintf("⏳ I'm still busy with %d queued messages, so I did not take this one: send it again once they are done, or /stop.", n)
}

// busy reports whether a turn is running.
func (w *chatWorker) busy() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running != nil
}

// interrupt returns the running item when it is a turn (a message or a
// scheduled prompt) whose answer has not begun to go out, and records
// that the chat is told it was interrupted (see markAnswered); nil
// otherwise: nothing runs, a command runs (the journal replays it), the
// turn's answer is going or went out, or the user stopped the turn (/stop
// answered it: told it was interrupted as well, a turn that ends before
// the shutdown cancels it would stay pending, and be reported and run
// again by /retry though the user stopped it).
func (w *chatWorker) interrupt() *workItem {
	w.mu.Lock()
	defer w.mu.Unlock()
	it := w.running
	if it == nil || (it.kind != itemMessage && it.kind != itemPrompt) || !it.state.Can(ledger.Interrupted) || w.stopped {
		return nil
	}
	it.state = ledger.Interrupted
	return it
}

// toldRestart reports whether the shutdown told the chat that it was
// interrupted.
func (w *chatWorker) toldRestart(it *workItem) bool {
	return w.stateOf(it) == ledger.Interrupted
}

// stateOf returns the state of it, which the shutdown may change.
func (w *chatWorker) stateOf(it *workItem) ledger.State {
	w.mu.Lock()
	defer w.mu.Unlock()
	return it.state
}

// move makes it next, which the table of ledger.State must allow: a move
// it refuses is a bug, logged, and it stays as it was.
func (w *chatWorker) move(it *workItem, next ledger.State) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.moveLocked(it, next)
}

// moveLocked is move with w.mu held.
func (w *chatWorker) moveLocked(it *workItem, next ledger.State) {
	s, err := it.state.To(next)
	if err != nil {
		w.h.logger.Error("a work item's state cannot change so", "scope", w.target.String(), "origin", it.origin.String(), "err", err)
	}
	it.state = s
}

// snapshot returns the running item and the number of queued ones.
func (w *chatWorker) snapshot() (running *workItem, queued int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running, len(w.queue)
}

// activity returns the tool call the running turn waits for, if any.
func (w *chatWorker) activity() (toolActivity, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.running == nil || w.running.tool.name == "" {
		return toolActivity{}, false
	}
	return w.running.tool, true
}

// stopResult is what stop did.
type stopResult struct {
	// stale reports that the Stop button's turn is no longer running:
	// nothing was stopped or dropped.
	stale bool
	// stopped reports that the running item was cancelled.
	stopped bool
	// dropped counts the queued items dropped; droppedIDs are their
	// journal entries.
	dropped    int
	droppedIDs []ledger.Origin
	// kept are the queued commands that stay and run next.
	kept []itemKind
}

// stop cancels the running item and drops the queued messages and
// scheduled prompts; queued commands (/new, /compact) stay and run next, as
// the user asked for them. With a turnID (a Stop button's), it does so only
// while that turn runs, and else reports the button stale. The dropped
// items' journal entries are the caller's to mark done, once the chat was
// told (see commander.stop).
func (w *chatWorker) stop(turnID string) stopResult {
	w.mu.Lock()
	if turnID != "" && (w.running == nil || w.running.turnID != turnID) {
		w.mu.Unlock()
		return stopResult{stale: true}
	}
	var kept []itemKind
	var stopped bool
	var q []*workItem
	rest := w.queue[:0:0]
	for _, it := range w.queue {
		if it.kind == itemNew || it.kind == itemCompact {
			rest = append(rest, it)
			kept = append(kept, it.kind)
			continue
		}
		w.moveLocked(it, ledger.Dropped)
		q = append(q, it)
	}
	w.queue = rest
	if w.running != nil && w.cancel != nil {
		w.cancel()
		w.stopped = true
		stopped = true
	}
	w.mu.Unlock()
	var ids []ledger.Origin
	for _, it := range q {
		if !it.origin.IsZero() {
			ids = append(ids, it.origin)
		}
	}
	return stopResult{stopped: stopped, dropped: len(q), droppedIDs: ids, kept: kept}
}

// close makes the loop exit once the running item ends; queued items stay
// pending in the journal, to be reported after the restart.
func (w *chatWorker) close() {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

func (w *chatWorker) loop() {
	for {
		w.mu.Lock()
		if w.closed {
			w.mu.Unlock()
			return
		}
		var it *workItem
		var ctx context.Context
		var cancel context.CancelFunc
		if len(w.queue) > 0 {
			it = w.queue[0]
			w.queue = w.queue[1:]
			ctx, cancel = context.WithCancel(w.h.turnCtx)
			it.turnID = newTurnID()
			w.running, w.cancel, w.stopped = it, cancel, false
			w.queuedNotice = 0
		}
		w.mu.Unlock()
		if it == nil {
			<-w.wake
			continue
		}
		w.run(ctx, it)
		cancel()
		w.mu.Lock()
		w.running, w.cancel = nil, nil
		w.mu.Unlock()
	}
}

// run carries out one item.
func (w *chatWorker) run(ctx context.Context, it *workItem) {
	h := w.h
	switch it.kind {
	case itemNew:
		h.newSession(ctx, w.target)
	case itemCompact:
		h.compactSession(ctx, w.target)
	default:
		w.runTurn(ctx, it)
	}
	// What happens to the entry is ledger.Settle's to say: answered, it
	// is done even in a shutdown; a turn a shutdown cut, or that the
	// shutdown told the chat was interrupted, stays pending for the
	// restart to report; one whose outcome a report tells waits for it.
	w.mu.Lock()
	state, done := ledger.Settle(it.state, h.turnCtx.Err() != nil)
	it.state = state
	w.mu.Unlock()
	if done {
		h.journalDone(it.origin)
	}
}

// journalDone marks the journal entries of origins done (zero: none).
func (h *Host) journalDone(origins ...ledger.Origin) {
	for _, o := range origins {
		if !o.IsZero() {
			h.storage.journaled(h.journal.Done(o))
		}
	}
}

package chat

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
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
	// journalID is the inbound journal entry the item finishes (0: none).
	journalID int64
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

// enqueue appends it and reports whether it has to wait behind a running
// turn or other queued items.
func (w *chatWorker) enqueue(it *workItem) (waits bool) {
	w.mu.Lock()
	waits = w.running != nil || len(w.queue) > 0
	w.queue = append(w.queue, it)
	w.mu.Unlock()
	select {
	case w.wake <- struct{}{}:
	default:
	}
	return waits
}

// busy reports whether a turn is running.
func (w *chatWorker) busy() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running != nil
}

// snapshot returns the running item and the number of queued ones.
func (w *chatWorker) snapshot() (running *workItem, queued int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running, len(w.queue)
}

// stop cancels the running item and drops the queued messages and
// scheduled prompts; queued commands (/new, /compact) stay and run next, as
// the user asked for them. It returns whether something was stopped, how
// many items it dropped and the commands it kept. The dropped items'
// journal entries are marked done.
func (w *chatWorker) stop() (stopped bool, dropped int, kept []itemKind) {
	w.mu.Lock()
	var q []*workItem
	rest := w.queue[:0:0]
	for _, it := range w.queue {
		if it.kind == itemNew || it.kind == itemCompact {
			rest = append(rest, it)
			kept = append(kept, it.kind)
			continue
		}
		q = append(q, it)
	}
	w.queue = rest
	if w.running != nil && w.cancel != nil {
		w.cancel()
		w.stopped = true
		stopped = true
	}
	w.mu.Unlock()
	for _, it := range q {
		w.h.journalDone(it.journalID)
	}
	return stopped, len(q), kept
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
			w.running, w.cancel, w.stopped = it, cancel, false
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
		h.runTurn(ctx, w, it)
	}
	// A turn cut short by a shutdown stays pending: it is reported after the
	// restart, and /retry replays it.
	if h.turnCtx.Err() == nil {
		h.journalDone(it.journalID)
	}
}

func (h *Host) journalDone(id int64) {
	if err := h.journal.done(id); err != nil {
		h.logger.Warn("journal", "err", err)
	}
}

// sessionID returns target's current session id.
func (h *Host) sessionID(t target) string {
	if id := h.settings.get(t.String()).Session; id != "" {
		return id
	}
	return t.sessionBase()
}

// session opens (or returns) target's current session, with the chat's
// model (see /model) applied.
func (h *Host) session(ctx context.Context, t target) (*agent.Session, error) {
	scope := t.String()
	model := h.chatModel(scope)
	s, err := h.cfg.Agent.Session(ctx, agent.SessionOptions{
		ID:       h.sessionID(t),
		Scope:    scope,
		TimeZone: h.TimeZone(scope),
		Model:    model,
	})
	if err != nil {
		return nil, err
	}
	if model != "" && s.Model() != model {
		s.SetModel(model)
	}
	return s, nil
}

// newSession closes target's session (its transcript stays on disk) and
// points the chat at a fresh one.
func (h *Host) newSession(ctx context.Context, t target) {
	if s, err := h.session(ctx, t); err == nil {
		s.Close()
	}
	id := t.sessionBase() + "." + strconv.FormatInt(time.Now().UnixNano(), 36)
	if err := h.settings.update(t.String(), func(c *chatSettings) { c.Session = id }); err != nil {
		h.logger.Error("new session", "err", err)
		h.sendText(ctx, t, "⚠️ Could not start a new session: the chat settings cannot be written.", 0)
		return
	}
	h.sendText(ctx, t, "🆕 New session started. The previous conversation is kept on disk.", 0)
}

// runTurn runs one turn for it: builds the user content (attachments
// downloaded, voice transcribed), prompts the session, streams the answer.
func (h *Host) runTurn(ctx context.Context, w *chatWorker, it *workItem) {
	t := w.target
	replyTo := 0
	if it.in != nil {
		replyTo = it.in.msg.ID
	}
	stopTyping := h.startTyping(ctx, t)
	defer stopTyping()
	content := it.content
	if it.in != nil {
		var err error
		if content, err = h.buildContent(ctx, t, it.in); err != nil {
			if ctx.Err() == nil {
				h.sendText(ctx, t, "⚠️ "+err.Error(), replyTo)
			}
			return
		}
	}
	sess, err := h.session(ctx, t)
	if err != nil {
		h.logger.Error("open session", "scope", t.String(), "err", err)
		h.sendText(ctx, t, "⚠️ The session cannot be opened: "+err.Error(), replyTo)
		return
	}
	out := h.newTurnOutput(ctx, t, it.label, replyTo)
	res, err := sess.Prompt(ctx, content, out.emit)
	if err != nil && !errors.Is(err, context.Canceled) {
		h.logger.Error("turn failed", "scope", t.String(), "session", sess.ID(), "err", err)
	}
	// Finishing uses a context of its own: the answer of a stopped turn is
	// still delivered, a retry_after is waited out, and a shutdown leaves a
	// little time for it.
	fctx, cancel := h.finishContext(ctx)
	defer cancel()
	w.mu.Lock()
	stopped := w.stopped
	w.mu.Unlock()
	out.finish(fctx, res.Text, err, stopped, h.turnCtx.Err() != nil)
}

// turnError words a failed turn for the chat by its cause, without the
// raw error of a known cause (the log has it).
func turnError(err error) string {
	var pe *agent.ProviderError
	isProvider := errors.As(err, &pe)
	switch {
	case errors.Is(err, agent.ErrContextTooLong):
		return "⚠️ The conversation no longer fits the model's context window. Send /compact to summarise the older messages, or /new to start a fresh session."
	case errors.Is(err, agent.ErrSessionClosed):
		return "⚠️ The session was closed (/new); send your message again."
	case isProvider && (pe.StatusCode == 401 || pe.StatusCode == 403):
		return "⚠️ The model provider rejected the bot's API key — the operator should check OPENAI_API_KEY."
	case isProvider && pe.StatusCode == 429:
		return "⚠️ The model provider is rate-limiting; try again in a minute."
	case isProvider && pe.StatusCode >= 500:
		return fmt.Sprintf("⚠️ The model provider is having trouble (HTTP %d); try again shortly.", pe.StatusCode)
	case unreachable(err):
		return "⚠️ The model provider can't be reached right now."
	}
	first, _, _ := strings.Cut(strings.TrimSpace(err.Error()), "\n")
	return "⚠️ The turn failed: " + shorten(first, 200)
}

// unreachable reports whether err says the model provider could not be
// reached or did not answer in time: a network error or a timeout.
func unreachable(err error) bool {
	for _, target := range []error{context.DeadlineExceeded, syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EHOSTUNREACH,
		syscall.ENETUNREACH, syscall.ETIMEDOUT, io.ErrUnexpectedEOF} {
		if errors.Is(err, target) {
			return true
		}
	}
	msg := strings.ToLower(err.Error())
	for _, s := range []string{"dial tcp", "no such host", "connection refused", "connection reset", "i/o timeout",
		"tls handshake", "network is unreachable", "timeout awaiting", "no data from the model provider"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

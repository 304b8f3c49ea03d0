package chat

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/approvals"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
	"github.com/volcanic/telegram-agent/internal/chat/markup"
	"github.com/volcanic/telegram-agent/internal/chat/turnview"
	"github.com/volcanic/telegram-agent/internal/storagefail"
	"github.com/volcanic/telegram-agent/internal/usage"
)

// runTurn runs one turn for it: builds the user content (attachments
// downloaded, voice transcribed), prompts the session, streams the answer.
func (w *chatWorker) runTurn(ctx context.Context, it *workItem) {
	h := w.h
	t := w.target
	replyTo := 0
	if it.in != nil {
		replyTo = it.in.msg.ID
	}
	if msg, over := h.meter.overLimit(t); over {
		if it.label != "" {
			msg = it.label + ": not run. " + msg
		}
		h.logger.Info("turn refused: the chat is over its daily usage limit", "scope", t.String(), "limit", h.limit.String())
		if errors.Is(w.markAnswered(it), errRestartTold) {
			return
		}
		err := h.out.sendText(ctx, t, msg, replyTo)
		w.delivered(ctx, it, err, msg, replyTo, err == nil || ctx.Err() == nil)
		return
	}
	ctx = usage.WithTurn(ctx, it.turnID)
	stopTyping := h.out.to(t).Typing(ctx)
	defer stopTyping()
	content := it.content
	if it.in != nil {
		var err error
		if content, err = h.buildContent(ctx, t, it.in); err != nil {
			if ctx.Err() == nil {
				text := "⚠️ " + chatText(err)
				w.undelivered(ctx, it, h.out.sendText(ctx, t, text, replyTo), text, replyTo)
			}
			return
		}
	}
	sess, err := h.session(ctx, t)
	if err != nil {
		text, serr := h.tellSessionError(ctx, t, err, replyTo)
		w.undelivered(ctx, it, serr, text, replyTo)
		return
	}
	scope := t.String()
	out := h.out.to(t).Turn(ctx, turnview.TurnOptions{Label: it.label, ReplyTo: replyTo, StatusMode: h.sessions.toolStatusMode(scope),
		StopData: callbackStop + ":" + it.turnID, Explain: turnError, Primary: func() string {
			if m := h.sessions.chatModel(scope); m != "" {
				return m
			}
			return h.cfg.Model
		}})
	promptCtx := agent.WithFrontEnd(turnview.WithTurn(ctx, out), h.front)
	if it.kind == itemPrompt {
		// A scheduled job's turn: nobody watches it to answer an approval.
		promptCtx = approvals.Unattended(promptCtx)
	}
	start := time.Now()
	res, err := sess.Prompt(promptCtx, content, func(ev agent.Event) {
		w.trackTool(it, ev)
		out.Emit(ev)
	})
	switch {
	case err != nil && storagefail.Is(err):
		// The episode's one line says the agent dir cannot be written.
		h.storage.failed("transcript", err)
		h.logger.Debug("turn failed: its transcript cannot be written", "scope", t.String(), "session", sess.ID(), "err", err)
	case err != nil && !errors.Is(err, context.Canceled):
		h.logger.Error("turn failed", "scope", t.String(), "session", sess.ID(), "err", err)
	case err == nil:
		h.storage.wrote("transcript")
	}
	w.logTurn(it, sess, out.AnsweredBy(sess.Model()), content, res, err, time.Since(start))
	// Finishing uses a context of its own: the answer of a stopped turn is
	// still delivered, a retry_after is waited out, and a shutdown leaves a
	// little time for it.
	fctx, cancel := h.view.FinishContext(ctx)
	defer cancel()
	w.mu.Lock()
	stopped := w.stopped
	w.mu.Unlock()
	shuttingDown := h.turnCtx.Err() != nil
	// A turn the shutdown cut stays pending for /retry; one whose answer
	// came whole (just before the shutdown, or as it began) sends that
	// answer, so it is answered, and so is one the user stopped (/stop
	// answered it), whether it ended before the shutdown or with it.
	final := res.Text
	if !shuttingDown || err == nil || stopped {
		if merr := w.markAnswered(it); errors.Is(merr, errRestartTold) {
			// The chat was told this turn was interrupted: it ends as a
			// turn the shutdown cut, and the restart reports it.
			final, err, shuttingDown = "", context.Canceled, true
		} else if merr != nil {
			// The answer goes out only once the journal holds its mark:
			// sent with the mark unwritten (a full disk), a kill before
			// the disk is freed would leave the message pending, and the
			// restart would report it as interrupted, and /retry answer
			// it a second time. The chat is told the turn could not be
			// saved instead (the streamed preview is replaced). That
			// holds for a turn that failed as well: its outcome would
			// carry the text streamed so far (a whole answer, when only
			// its transcript could not be written).
			final, err = turnError(merr), nil
		}
	}
	ferr := out.Finish(fctx, final, err, stopped, shuttingDown)
	// A delivery cut by the end of fctx leaves the entry answering, to be
	// told after the restart; one Telegram did not take otherwise is told
	// now.
	w.delivered(ctx, it, ferr, undeliveredText, replyTo, fctx.Err() == nil)
}

// delivered settles it, answering, once the delivery of its answer
// returned err: refused when Telegram did not take it (see undelivered),
// else answered when the delivery ended (ended: its time did not run
// out), else left answering, for the restart to tell the chat that the
// answer may have been cut short.
func (w *chatWorker) delivered(ctx context.Context, it *workItem, err error, text string, replyTo int, ended bool) {
	if !w.undelivered(ctx, it, err, text, replyTo) && ended && w.stateOf(it) == ledger.Answering {
		w.move(it, ledger.Answered)
	}
}

// undeliveredText tells the chat that Telegram did not take (all of) the
// answer to its message.
const undeliveredText = "⚠️ Telegram did not take the answer to this message, so it could not all be sent; send the message again if it did not arrive whole."

// undeliveredPromptText tells the chat that Telegram did not take (all of)
// the answer of the scheduled prompt label.
func undeliveredPromptText(label string) string {
	return "⚠️ Telegram did not take the answer of the scheduled job “" + label + "”, so it could not all be sent."
}

// undelivered handles the outcome of it (its answer, or the error that
// ended the turn) that Telegram did not take when sent: err is that
// send's error, text what the chat is told instead. When the send failed
// for a passing reason (5xx answers, 429s, no answer, the delivery's time
// running out) and the turn was not stopped (/stop; a shutdown, whose
// restart reports the entry), the chat is told with a report, sent until
// Telegram takes it, and the entry is done only then (see
// chatWorker.run): marked done at once, a message whose outcome never
// reached the chat would be lost without a word. A refusal for good (the
// user blocked the bot, a chat the bot cannot post to) is not retried. It
// reports whether a report took over (the item is refused then).
func (w *chatWorker) undelivered(ctx context.Context, it *workItem, err error, text string, replyTo int) bool {
	h := w.h
	if err == nil || it.origin.IsZero() || ctx.Err() != nil || h.turnCtx.Err() != nil || w.toldRestart(it) {
		return false
	}
	t := w.target
	if it.kind == itemPrompt && text == undeliveredText {
		text = undeliveredPromptText(it.label)
	}
	if !passing(err) && !errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	h.logger.Warn("telegram did not take a turn's outcome; the chat is told once it does", "scope", t.String(), "err", err)
	w.move(it, ledger.Refused)
	o := it.origin
	h.out.report(t, text, replyTo, nil, func() { h.journalDone(o) })
	return true
}

// markAnswered journals it as answered before its answer is sent. The
// invariant: a message is reported as interrupted (and /retry runs it)
// only when no answer to it can have reached Telegram. Marking after the
// send would leave a moment, between Telegram taking the answer and the
// journal's fsync, where a crash reports an answered message and /retry
// answers it twice; the Bot API has no idempotent send to close that gap
// from the other side. So the mark comes first, as "answering", and
// "done" follows once the delivery ended (see chatWorker.run): a crash in
// between never runs the finished turn again; after the restart the chat
// is told, in reply to the message, that its answer may have been cut
// short, so that nothing is lost silently. A turn cut by a shutdown is not
// marked: its answer says it stopped, and it stays pending for /retry;
// one whose answer was complete is, since that answer goes out.
//
// It returns the error of journaling the mark: a mark that cannot be
// journaled withholds the answer (see ledger.Journal.Answering).
//
// It returns errRestartTold, marking nothing, when the shutdown told the
// chat already that the turn was interrupted (see chatWorker.interrupt):
// the decision and the mark are taken under the worker's lock, so the
// chat is told one or the other, never both.
func (w *chatWorker) markAnswered(it *workItem) error {
	w.mu.Lock()
	switch it.state {
	case ledger.Interrupted:
		w.mu.Unlock()
		return errRestartTold
	case ledger.Answering:
		w.mu.Unlock()
		return nil
	}
	w.moveLocked(it, ledger.Answering)
	w.mu.Unlock()
	err := w.h.journal.Answering(it.origin)
	w.h.storage.journaled(err)
	return err
}

// errRestartTold is markAnswered's refusal of a turn the shutdown told the
// chat was interrupted.
var errRestartTold = errors.New("chat: the chat was told this turn was interrupted by the restart")

// turnError words a failed turn for the chat by its cause, without the
// raw error of a known cause (the log has it).
func turnError(err error) string {
	var pe *agent.ProviderError
	isProvider := errors.As(err, &pe)
	switch {
	case storagefail.Is(err):
		return "⚠️ This turn could not be saved: the bot's disk is full or cannot be written, so the conversation may not remember it. Send your message again once the operator has freed space."
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
	case errors.Is(err, agent.ErrStreamInterrupted):
		return "⚠️ The model's answer was cut off twice (the connection dropped); send your message again."
	case unreachable(err):
		return "⚠️ The model provider can't be reached right now."
	case isProvider && pe.StatusCode == 0:
		return "⚠️ The model provider's answer broke off or could not be read; try again."
	case isProvider:
		return fmt.Sprintf("⚠️ The model provider refused the request (HTTP %d): %s", pe.StatusCode, markup.Shorten(withoutURLs(pe.Message), 200))
	}
	first, _, _ := strings.Cut(strings.TrimSpace(err.Error()), "\n")
	return "⚠️ The turn failed: " + markup.Shorten(withoutURLs(first), 200)
}

// urlPattern matches a URL in an error's text.
var urlPattern = regexp.MustCompile(`[a-zA-Z][a-zA-Z0-9+.-]*://[^\s"']+`)

// withoutURLs replaces every URL in s, which the chat is never shown (a
// provider's address, a link in its error), with "(address)".
func withoutURLs(s string) string {
	return urlPattern.ReplaceAllString(s, "(address)")
}

// unreachable reports whether err says the model provider could not be
// reached or did not answer in time: a transport error (no HTTP answer:
// *url.Error, a dial, DNS or TLS failure, all net.Error), a refused or
// reset connection, or a timeout. It goes by the error's types, never its
// text.
func unreachable(err error) bool {
	for _, target := range []error{context.DeadlineExceeded, syscall.ECONNREFUSED, syscall.ECONNRESET, syscall.EHOSTUNREACH,
		syscall.ENETUNREACH, syscall.ETIMEDOUT, io.ErrUnexpectedEOF} {
		if errors.Is(err, target) {
			return true
		}
	}
	var netErr net.Error
	var certErr *tls.CertificateVerificationError
	var recordErr tls.RecordHeaderError
	if errors.As(err, &netErr) {
		// A bare syscall.Errno is a net.Error too (it has Timeout and
		// Temporary), and a file error wraps one: only the errnos above
		// say the provider was unreachable.
		if _, bare := netErr.(syscall.Errno); !bare {
			return true
		}
	}
	return errors.As(err, &certErr) || errors.As(err, &recordErr)
}

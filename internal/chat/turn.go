package chat

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/approvals"
)

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
				h.sendText(ctx, t, "⚠️ "+chatText(err), replyTo)
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
	out := h.newTurnOutput(ctx, t, it.turnID, it.label, replyTo)
	promptCtx := ctx
	if it.kind == itemPrompt {
		// A scheduled job's turn: nobody watches it to answer an approval.
		promptCtx = approvals.Unattended(ctx)
	}
	res, err := sess.Prompt(promptCtx, content, out.emit)
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
	return errors.As(err, &netErr) || errors.As(err, &certErr) || errors.As(err, &recordErr)
}

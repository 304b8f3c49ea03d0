package chat

import (
	"context"
	"fmt"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
)

// dispatch acts on an accepted message: a command at once, a turn queued on
// its chat's worker, a message the bot cannot read with a reply saying so.
func (h *Host) dispatch(ctx context.Context, in *inbound) {
	if in.unsupported != "" {
		h.commander.reply(in)(unsupportedText(in.unsupported))
		return
	}
	if in.approvalHint {
		h.commander.reply(in)(approvalHint)
		return
	}
	if !in.startsTurn {
		h.commander.handle(ctx, in)
		return
	}
	if in.edited && h.replaceQueued(in) {
		return
	}
	h.queueTurn(in, in.updateID)
}

// replaceQueued puts the edit in in place of its message while that waits
// in the chat's queue, and reports whether it did; the original's journal
// entry is done then, the edit's takes its place.
func (h *Host) replaceQueued(in *inbound) bool {
	w := h.existingWorker(in.target)
	if w == nil {
		return false
	}
	w.mu.Lock()
	var old ledger.Origin
	replaced := false
	for _, it := range w.queue {
		if it.kind == itemMessage && it.in != nil && it.in.msg.ID == in.msg.ID {
			// The edit replaces a message nobody has answered: it is not
			// marked as an edit for the model.
			edit := *in
			edit.edited = false
			old, it.in, it.origin, replaced = it.origin, &edit, ledger.Update(in.updateID), true
			break
		}
	}
	w.mu.Unlock()
	if replaced {
		h.journalDone(old)
		h.notice(in.target, "✏️ Updated the queued message.", in.msg.ID)
	}
	return replaced
}

// queueTurn queues in as a turn; the user is told when it has to wait, or
// that the chat's queue is full (the message is then dropped).
func (h *Host) queueTurn(in *inbound, updateID int64) {
	w, err := h.worker(in.target)
	if err != nil {
		return // shutting down: the journal keeps it for after the restart
	}
	waits, queued, err := w.enqueue(&workItem{kind: itemMessage, in: in, origin: ledger.Update(updateID), state: ledger.Queued})
	switch {
	case err != nil:
		// The refusal is the message's outcome: its journal entry is done
		// only once the chat was told (sent again while Telegram does not
		// take it), so that a crash before that leaves it pending,
		// reported after the restart, rather than lost without a word.
		h.logger.Warn("a chat's queue is full; the message was refused", "scope", in.target.String(), "queued", queued)
		h.report(in.target, busyText(queued), in.msg.ID, nil, func() { h.journalDone(ledger.Update(updateID)) })
	case waits:
		h.post(in.target, func(ctx context.Context) { h.noteQueued(ctx, w, in.msg.ID) })
	}
}

// noteQueued tells the chat that a message waits: the first one behind a
// running item gets a notice, the next ones edit it to say how many wait,
// so that many queued messages make one notice, not one each.
func (h *Host) noteQueued(ctx context.Context, w *chatWorker, replyTo int) {
	w.mu.Lock()
	id, waiting, running := w.queuedNotice, 0, w.running
	for _, it := range w.queue {
		if it.kind == itemMessage {
			waiting++
		}
	}
	w.mu.Unlock()
	t := w.target
	if id != 0 && waiting > 1 {
		text := fmt.Sprintf("⏳ Queued: %s; I will get to them after the current turn.", counted(waiting, "message", "messages"))
		if _, err := h.quick.EditMessageText(ctx, botapi.Edit{ChatID: t.chatID, MessageID: id, Text: text}); err == nil {
			return
		}
	}
	msg, err := h.quick.SendMessage(ctx, h.messageParams(t, "⏳ Queued: I will get to this after the current turn.", "", replyTo))
	if err != nil {
		h.logSendError("queued notice", t, err)
		return
	}
	w.mu.Lock()
	if w.running != nil && w.running == running {
		w.queuedNotice = msg.ID
	}
	w.mu.Unlock()
}

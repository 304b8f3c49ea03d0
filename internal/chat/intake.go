package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
	"github.com/volcanic/telegram-agent/internal/chat/turnview"
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
		h.out.notice(in.target, "✏️ Updated the queued message.", in.msg.ID)
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
		h.out.report(in.target, busyText(queued), in.msg.ID, nil, func() { h.journalDone(ledger.Update(updateID)) })
	case waits:
		h.out.post(in.target, func(ctx context.Context, n turnview.Noticer) { h.noteQueued(ctx, n, w, in.msg.ID) })
	}
}

// noteQueued tells the chat that a message waits: the first one behind a
// running item gets a notice, the next ones edit it to say how many wait,
// so that many queued messages make one notice, not one each.
func (h *Host) noteQueued(ctx context.Context, n turnview.Noticer, w *chatWorker, replyTo int) {
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
		if _, err := n.Send(ctx, turnview.Message{Edit: id, Text: text}); err == nil {
			return
		}
	}
	msgID, err := n.Send(ctx, turnview.Message{Text: "⏳ Queued: I will get to this after the current turn.", ReplyTo: replyTo})
	if err != nil {
		h.out.logSendError("queued notice", t, err)
		return
	}
	w.mu.Lock()
	if w.running != nil && w.running == running {
		w.queuedNotice = msgID
	}
	w.mu.Unlock()
}

// take journals the messages of a batch that start turns, then dispatches
// every update, and reports whether it took the batch: false when the
// journal cannot be written (nothing was dispatched; the source must not
// acknowledge the batch). An empty batch is taken at once.
func (h *Host) take(ctx context.Context, raws []json.RawMessage) bool {
	type decoded struct {
		raw json.RawMessage
		upd *models.Update
		in  *inbound
	}
	if len(raws) == 0 {
		return true
	}
	batch := make([]decoded, 0, len(raws))
	var entries []ledger.Entry
	var top int64 // the highest update of the batch journaled pending
	now := time.Now().Unix()
	inBatch := map[int64]bool{}
	for _, raw := range raws {
		u, err := botapi.DecodeUpdate(raw)
		if err != nil {
			h.logger.Warn("an update does not parse; skipped", "err", err)
			continue
		}
		if inBatch[u.ID] {
			// Delivered twice in one answer: the copy does not run again.
			h.logger.Info("skipped an update delivered twice", "update_id", u.ID)
			continue
		}
		inBatch[u.ID] = true
		if h.journal.Seen(u.ID) {
			// Journaled before a restart that came before its
			// acknowledgement: it was reported as interrupted (or has
			// run), so it does not run again.
			h.logger.Info("skipped an update that was journaled before the restart", "update_id", u.ID)
			continue
		}
		d := decoded{raw: raw, upd: u}
		if d.in = h.classifyUpdate(u); d.in != nil && d.in.startsTurn {
			entries = append(entries, ledger.Entry{Origin: ledger.Update(u.ID), State: ledger.Queued, Scope: d.in.target.String(), Update: raw, At: now})
			top = u.ID
		} else if h.journalEvery && !handled(d.in, d.upd) {
			// Only the journal knows that an update was taken (a
			// stranger's, one not for the bot), and its delivery again is
			// skipped.
			entries = append(entries, ledger.Entry{Origin: ledger.Update(u.ID), State: ledger.Dropped, At: now})
		}
		batch = append(batch, d)
	}
	// A command, a button press, a message the bot cannot read: journaled
	// as received, with its update, and done once handled and its replies
	// went out, so that a kill in between (which may come after the next
	// getUpdates confirmed the batch) leaves it to be handled after the
	// restart (see replayReceived).
	var received []decoded
	for _, d := range batch {
		if handled(d.in, d.upd) {
			entries = append(entries, ledger.Entry{Origin: ledger.Update(d.upd.ID), State: ledger.Received, Update: d.raw, At: now})
			received = append(received, d)
			if d.in != nil {
				d.in.replies = &replyCount{}
			}
		}
	}
	if err := h.journal.Write(entries...); err != nil {
		// Logged once per episode; the source does not acknowledge the
		// batch, so Telegram delivers it again. A polled batch of
		// commands alone is handled unjournaled instead: commands work on
		// a full disk (a crash may lose one then).
		h.storage.journaled(err)
		if h.journalEvery || top != 0 {
			return false
		}
		for _, d := range received {
			if d.in != nil {
				d.in.replies = nil
			}
		}
		received = nil
	} else if len(entries) > 0 {
		h.storage.journaled(nil)
	}
	for _, d := range batch {
		if d.in != nil {
			h.dispatch(ctx, d.in)
		} else if d.upd.CallbackQuery != nil {
			h.handleCallback(d.upd.CallbackQuery)
		}
	}
	for _, d := range received {
		h.handledDone(d.in, d.upd.ID)
	}
	return true
}

// handledDone marks a received update done once its handler returned and
// its replies went out (see commander.reply): a kill, a shutdown or a
// refusal for good before leaves it received, to be handled after the
// restart.
func (h *Host) handledDone(in *inbound, id int64) {
	o := ledger.Update(id)
	switch {
	case in == nil:
		h.journalDone(o)
	case in.deferred:
	case in.replies != nil:
		in.replies.close(func() { h.journalDone(o) })
	}
}

// replayReceived handles the updates found received at start-up: the bot
// died after it took them, before they were handled or their replies went
// out, and Telegram may never deliver them again. Each is then done as
// when first taken.
func (h *Host) replayReceived(ctx context.Context) {
	for _, e := range h.journal.Replay() {
		u, err := botapi.DecodeUpdate(e.Update)
		if err != nil {
			h.journalDone(e.Origin)
			continue
		}
		in := h.classifyUpdate(u)
		if !handled(in, u) {
			h.journalDone(e.Origin)
			continue
		}
		if in != nil {
			in.replies = &replyCount{}
		}
		h.logger.Info("handling an update a restart cut before it was handled", "update_id", e.Origin.UpdateID())
		if in != nil {
			h.dispatch(ctx, in)
		} else {
			h.handleCallback(u.CallbackQuery)
		}
		h.handledDone(in, e.Origin.UpdateID())
	}
}

// handled reports whether take hands the update to a handler that starts
// no turn: a command, a message the bot cannot read, a button press.
func handled(in *inbound, u *models.Update) bool {
	return in != nil && !in.startsTurn || in == nil && u.CallbackQuery != nil
}

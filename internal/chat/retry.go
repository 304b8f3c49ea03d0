package chat

import (
	"context"
	"fmt"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
)

// retryCommand runs again, in the order they came, every message and
// scheduled prompt of the chat that a restart interrupted (a prompt as the
// scheduler ran it: labelled, unattended); each runs once (the journal
// hands each out once), and all are journaled pending again before any is
// queued, so a crash during the retry reports them anew; when that cannot
// be written (a full disk) none runs, and the chat is told why. It takes
// only as many as the chat's queue has room for, oldest first, and says
// how many are left for the next /retry: the rest would be refused by the
// full queue. A retried prompt is not refused because a prompt of the
// same job waits: the user asked for it.
func (h *Host) retryCommand(_ context.Context, in *inbound, reply func(string)) {
	room := maxQueued
	if w := h.existingWorker(in.target); w != nil {
		_, queued := w.snapshot()
		room -= queued
	}
	if room <= 0 {
		if _, left := h.journal.TakeInterrupted(in.target.String(), 0); left > 0 {
			reply(fmt.Sprintf("⏳ The queue is full; send /retry again once it has room (%s to run again).", counted(left, "interrupted message", "interrupted messages")))
			return
		}
	}
	entries, left := h.journal.TakeInterrupted(in.target.String(), max(room, 0))
	if len(entries) == 0 {
		reply("Nothing to retry: no message of this chat was interrupted by a restart.")
		return
	}
	var again []retryItem
	marks := make([]ledger.Entry, 0, len(entries))
	unreadable, prompts := 0, 0
	for _, e := range entries {
		if e.Origin.IsPrompt() {
			// Run as the scheduler ran it: labelled, unattended.
			it := &workItem{kind: itemPrompt, label: e.Label, content: []agent.Content{agent.Text(e.Prompt)}, origin: e.Origin, state: ledger.Queued}
			e.State = ledger.Queued
			marks = append(marks, e)
			again = append(again, retryItem{prompt: it})
			prompts++
			continue
		}
		var a *inbound
		if u, err := botapi.DecodeUpdate(e.Update); err == nil {
			a = h.classifyUpdate(u)
		}
		if a == nil || !a.startsTurn {
			unreadable++
			marks = append(marks, ledger.Entry{Origin: e.Origin, State: ledger.Dropped})
			continue
		}
		e.State = ledger.Queued
		marks = append(marks, e)
		again = append(again, retryItem{in: a, id: e.Origin.UpdateID()})
	}
	// Journaled before anything runs: a message the journal does not
	// know to be running again would stay interrupted in the file, and a
	// crash would leave it never reported again after the chat was told
	// it runs. When that cannot be written, nothing is taken.
	if err := h.journal.Write(marks...); err != nil {
		h.storage.journaled(err)
		h.journal.PutBack(in.target.String(), entries)
		reply("⚠️ The interrupted messages cannot be run again right now: the bot's disk is full or cannot be written. Send /retry once the operator has freed space.")
		return
	}
	noun := "interrupted messages"
	switch {
	case prompts == len(again):
		noun = "interrupted scheduled jobs"
	case prompts > 0:
		noun = "interrupted messages and scheduled jobs"
	}
	switch {
	case len(again) == 0:
		reply("The interrupted message cannot be replayed; please send it again.")
		return
	case left > 0:
		reply(fmt.Sprintf("🔁 Running the oldest %d of your %s again, in order; send /retry again for the other %d once they are done.", len(again), noun, left))
	case len(again) == 1 && unreadable == 0 && prompts == 1:
		reply("🔁 Running the interrupted scheduled job “" + again[0].prompt.label + "” again.")
	case len(again) == 1 && unreadable == 0:
		reply("🔁 Running your interrupted message again.")
	case unreadable == 0:
		reply(fmt.Sprintf("🔁 Running your %d %s again, in order.", len(again), noun))
	default:
		reply(fmt.Sprintf("🔁 Running %d of your %s again; %d cannot be replayed, please send them again.", len(again), noun, unreadable))
	}
	for _, r := range again {
		if r.prompt != nil {
			h.queueRetriedPrompt(in.target, r.prompt)
			continue
		}
		h.queueTurn(r.in, r.id)
	}
}

// retryItem is one interrupted entry /retry runs again: a message (in, its
// journal entry id) or a scheduled prompt.
type retryItem struct {
	in     *inbound
	id     int64
	prompt *workItem
}

// queueRetriedPrompt queues the interrupted scheduled prompt it again. A
// queue that filled up since /retry counted its room refuses it: the chat
// is told so, and its journal entry is done only then, as a refused
// message's is (see queueTurn).
func (h *Host) queueRetriedPrompt(t target, it *workItem) {
	w, err := h.worker(t)
	if err != nil {
		return // shutting down: the journal keeps it for after the restart
	}
	if _, queued, err := w.enqueue(it); err != nil {
		h.logger.Warn("a chat's queue is full; the retried scheduled prompt was refused", "scope", t.String(), "queued", queued)
		o := it.origin
		h.out.report(t, "⏳ The chat's queue is full, so the scheduled job “"+it.label+"” was not run again.", 0, nil, func() { h.journalDone(o) })
	}
}

package chat

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/go-telegram/bot/models"
)

// retryCommand runs again, in the order they came, every message of the
// chat that a restart interrupted; each runs once (the journal hands each
// out once), and all are journaled pending again before any is queued, so
// a crash during the retry reports them anew; when that cannot be written
// (a full disk) none runs, and the chat is told why. It takes only as many as the
// chat's queue has room for, oldest first, and says how many are left for
// the next /retry: the rest would be refused by the full queue.
func (h *Host) retryCommand(_ context.Context, in *inbound, reply func(string)) {
	room := maxQueued
	if w := h.existingWorker(in.target); w != nil {
		_, queued := w.snapshot()
		room -= queued
	}
	if room <= 0 {
		if _, left := h.journal.takeInterrupted(in.target.String(), 0); left > 0 {
			reply(fmt.Sprintf("⏳ The queue is full; send /retry again once it has room (%s to run again).", counted(left, "interrupted message", "interrupted messages")))
			return
		}
	}
	entries, left := h.journal.takeInterrupted(in.target.String(), max(room, 0))
	if len(entries) == 0 {
		reply("Nothing to retry: no message of this chat was interrupted by a restart.")
		return
	}
	var again []*inbound
	var ids []int64
	marks := make([]journalEntry, 0, len(entries))
	unreadable := 0
	for _, e := range entries {
		var u models.Update
		var a *inbound
		if json.Unmarshal(e.Update, &u) == nil {
			a = h.classifyUpdate(&u)
		}
		if a == nil || !a.startsTurn {
			unreadable++
			marks = append(marks, journalEntry{ID: e.ID, State: stateDone})
			continue
		}
		e.State = statePending
		marks = append(marks, e)
		again, ids = append(again, a), append(ids, e.ID)
	}
	// Journaled before anything runs: a message the journal does not
	// know to be running again would stay interrupted in the file, and a
	// crash would leave it never reported again after the chat was told
	// it runs. When that cannot be written, nothing is taken.
	if err := h.journal.write(marks...); err != nil {
		h.journaled(err)
		h.journal.putBack(in.target.String(), entries)
		reply("⚠️ The interrupted messages cannot be run again right now: the bot's disk is full or cannot be written. Send /retry once the operator has freed space.")
		return
	}
	switch {
	case len(again) == 0:
		reply("The interrupted message cannot be replayed; please send it again.")
		return
	case left > 0:
		reply(fmt.Sprintf("🔁 Running the oldest %d of your interrupted messages again, in order; send /retry again for the other %d once they are done.", len(again), left))
	case len(again) == 1 && unreadable == 0:
		reply("🔁 Running your interrupted message again.")
	case unreadable == 0:
		reply(fmt.Sprintf("🔁 Running your %d interrupted messages again, in order.", len(again)))
	default:
		reply(fmt.Sprintf("🔁 Running %d of your interrupted messages again; %d cannot be replayed, please send them again.", len(again), unreadable))
	}
	for i, a := range again {
		h.queueTurn(a, ids[i])
	}
}

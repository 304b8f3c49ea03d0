package ledger

import (
	"fmt"
	"slices"
)

// State is where one inbound item stands on its way to being answered
// once, or to the chat being told. The zero State is none: an item not
// journaled yet (a scheduled prompt before Journal.WritePrompt), or an
// entry of the file in a state this version does not know.
type State uint8

const (
	// Received is an update that starts no turn (a command, a button
	// press), taken and not handled yet: it is Answered once handled and
	// its replies went out. Found received at start-up it is handled then
	// (Journal.Replay). "received" in the file.
	Received State = iota + 1
	// Queued is a turn journaled before its update was acknowledged (or a
	// scheduled prompt before the scheduler was told it was taken),
	// waiting in its chat's queue or running. "pending" in the file.
	Queued
	// Answering is a turn whose outcome is journaled as answered and is
	// being sent (see the durability rule in the package doc). Found
	// answering at start-up, the chat is told that the answer may have
	// been cut short. "answering" in the file.
	Answering
	// Answered is finished: the chat got the item's outcome (its answer,
	// the command's replies, or a report instead of either). "done" in
	// the file.
	Answered
	// Refused is an item whose outcome is a report: its chat's queue
	// refused it, or Telegram did not take its outcome for a passing
	// reason. It is Answered once the report went out (see Reporter). In
	// memory only: the file keeps it "pending" until then.
	Refused
	// Interrupted is a turn a restart cut short: the shutdown told the
	// chat so, or start-up found it queued. It is Reported once the chat
	// was told after the restart. In memory only: "pending" in the file.
	Interrupted
	// Reported is an interrupted item the chat was told about after the
	// restart: /retry queues it again. "interrupted" in the file.
	Reported
	// Dropped is finished without a turn: /stop dropped it from the queue,
	// /retry cannot replay it, or it was no update for the bot. "done" in
	// the file.
	Dropped
)

// transitions is every legal move of an item, the one table of them: a
// move not listed here is refused (State.To).
var transitions = map[State][]State{
	Received:  {Answered, Dropped},
	Queued:    {Answering, Answered, Refused, Interrupted, Dropped},
	Answering: {Answered, Refused},
	Refused:   {Answered},
	// An interrupted item goes back to the queue with /retry, reported or
	// not yet (the report is then no longer needed).
	Interrupted: {Reported, Queued, Dropped},
	Reported:    {Queued, Dropped},
}

// names are the states' names in logs and errors.
var names = map[State]string{
	Received: "received", Queued: "queued", Answering: "answering", Answered: "answered",
	Refused: "refused", Interrupted: "interrupted", Reported: "reported", Dropped: "dropped",
}

// String names s.
func (s State) String() string {
	if n, ok := names[s]; ok {
		return n
	}
	return fmt.Sprintf("state(%d)", uint8(s))
}

// Can reports whether the table lets s become next.
func (s State) Can(next State) bool { return slices.Contains(transitions[s], next) }

// To returns next when the table lets s become it, and an error naming
// both otherwise: an illegal move is a bug the caller must not carry out.
func (s State) To(next State) (State, error) {
	if !s.Can(next) {
		return s, fmt.Errorf("ledger: an item %s cannot become %s", s, next)
	}
	return next, nil
}

// Settle is the decision of a worker through with an item in state s:
// the state it stays in, and whether its entry is marked done now. An
// item answered is done, even in a shutdown; one queued or received that
// ended without an answer being marked (its error told, a command run) is
// done unless a shutdown cut it, which leaves it in the file for after
// the restart. Anything else waits: a report that marks it done once sent
// (refused), the restart's report (interrupted, or answering with its
// delivery cut short).
func Settle(s State, shuttingDown bool) (State, bool) {
	switch s {
	case Answered:
		return s, true
	case Queued, Received:
		if shuttingDown {
			return s, false
		}
		return Answered, true
	}
	return s, false
}

// onDisk is each state's word in the file. The in-memory states keep the
// word of the state they were journaled in.
var onDisk = map[State]string{
	Received: "received", Queued: "pending", Answering: "answering", Answered: "done",
	Refused: "pending", Interrupted: "pending", Reported: "interrupted", Dropped: "done",
}

// fromDisk reads a state's word of the file; one this version does not
// know is the zero State.
func fromDisk(word string) State {
	switch word {
	case "received":
		return Received
	case "pending":
		return Queued
	case "answering":
		return Answering
	case "done":
		return Answered
	case "interrupted":
		return Reported
	}
	return 0
}

// finished reports whether s is done in the file.
func (s State) finished() bool { return s == Answered || s == Dropped }

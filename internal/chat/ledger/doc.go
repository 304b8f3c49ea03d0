// Package ledger keeps the promise "every message is answered once, or the
// chat is told": the inbound journal (inbound.jsonl in the agent dir, each
// entry fsync'd before its update is acknowledged to Telegram), the typed
// state of one inbound item with every legal transition in one table
// (transitions, in state.go), and the Reporter that tells a chat what it
// must be told until Telegram takes it.
//
// The durability rule: a mark that cannot be journaled withholds the
// answer. An item becomes Answering in the journal (fsync'd) before its
// answer is sent; when that mark cannot be written (a full disk) the answer
// does not go out, since a kill before the mark reaches the disk would
// leave the item queued in the file, and the restart would report it as
// interrupted and /retry answer it twice. Journal.Answering is the one
// function that enforces it: its error is the caller's refusal to send.
//
// The package does not import chat: it knows scopes, updates and scheduled
// prompts as data, and reaches a chat only through a Reporter's Outlet.
package ledger

// Package turnview is what a chat sees of the bot: a turn's streamed
// answer, its tool status message, the delivery of its outcome, the typing
// indicator, and the notices between turns.
//
// It works on an Outlet (one chat, or one forum topic, of a View), never on
// the chat host, and it does not import the host. Every message the bot
// sends to a chat goes through one of an Outlet's three verbs, each with
// its retries and its lifetime said once:
//
//   - Answer: every try the retry policy gives, until the caller's context
//     ends; a long text goes out split, and a part Telegram does not take is
//     marked where it was cut and sent again at the end. A turn's outcome,
//     and what must reach the chat in its place in the turn.
//   - Notice: a transient reply, queued behind the chat's earlier notices
//     and sent off the caller's goroutine, two tries each, within
//     NoticeTimeout. Command replies, "queued", button answers, reports.
//   - Preview: one try, held back while a 429's retry_after runs: the next
//     preview follows soon and replaces it. Streamed drafts and edits, the
//     running tool status.
//
// Texts reach it redacted where they come from (the agent emits only
// redacted events), and the Bot API client redacts every send again, its
// visible text too: this package cuts texts, it does not redact them.
package turnview

// Package botapi is the one client of the Telegram Bot API that every call
// of the bot goes through.
//
// It speaks the HTTP API directly (JSON bodies, multipart for uploads) and
// owns three promises:
//
//   - Everything sent is redacted: texts, captions, edits, drafts, button
//     texts and URLs, callback answers, command descriptions and file names.
//     A text in the HTML parse mode is also checked as the user will see it
//     (tags dropped, entities decoded): when that visible text holds a
//     secret, the message goes out as its redacted visible text, plain, so a
//     secret split by markup never shows whole.
//   - Failed calls are retried by a RetryPolicy: a 429 waits its whole
//     retry_after, never less; a 5xx or a network error backs off.
//   - A failed call returns an *Error, classified by Telegram's error_code
//     and description fields (ClassOf, IsBadMarkup, ...). Its text and its
//     Unwrap chain never carry the bot token.
package botapi

// Package telegramtest provides a fake Telegram Bot API server for tests.
//
// A Server speaks the same HTTP protocol as the real Bot API: requests are
// POSTed (or sent with GET) to <URL>/bot<token>/<method> with a JSON,
// multipart/form-data or URL-encoded body, and answers are
// {"ok":true,"result":...} or {"ok":false,"error_code":...,"description":...}.
// Files registered with AddFile are served at <URL>/file/bot<token>/<path>.
//
// The server keeps enough state for a chat host's tests: an update queue
// served by long polling getUpdates, the messages the bot sent to each chat
// (after edits and deletions), registered files and commands. Every request
// is recorded, so tests can wait for one, assert on its parameters, and scan
// everything Telegram received for secret values, and everything a user
// saw (Shown: texts as Telegram shows them, captions, file and button names). Failures can be injected per
// method (429 with retry_after, 5xx, 409, 403, ...), a method can be made
// unknown (as sendMessageDraft is on an older Bot API server), and HTML text
// is validated as Telegram's HTML parse mode does it.
//
// Once the bot calls setWebhook, the server delivers the queued updates as
// Telegram does: POSTed to the URL one at a time, with the secret_token in
// the X-Telegram-Bot-Api-Secret-Token header, and again after a pause
// until the bot answers 200 (Deliveries records each). getUpdates is then
// refused with 409, getWebhookInfo reports the pending count and the last
// delivery error, and LoseNextAnswers and Redeliver stage Telegram's
// redeliveries.
//
// The server is safe for concurrent use and is closed by the test's Cleanup;
// pending long polls are released when it closes.
package telegramtest

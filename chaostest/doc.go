// Package chaostest drives the real bot binary against the fake Bot API
// (internal/telegramtest) and the fake model (internal/openaitest) with
// faults injected at random, seeded and reproducible: many chats at once,
// each a user who sends messages and voice notes and mostly waits for the
// outcome (now and then sending on, rarely flooding past the queue),
// Telegram and model failures, and SIGKILLs (at random, at a journal
// write, while a compaction summary streams) and SIGTERMs, with restarts
// as a supervisor would; in the long form the agent dir also fills up
// (ENOSPC) now and then, and the binary's healthcheck must say so and
// recover. The fake model reports token usage and the
// context window is small, so long sessions are compacted. It then checks
// the promise that no accepted message is lost silently and none is
// answered twice, and bounds memory, threads and goroutines (from the
// bot's "runtime stats" log line). The short form runs in go test ./...;
// -chaos.long runs the soak (see docs/performance.md).
package chaostest

// Package chaostest drives the real bot binary against the fake Bot API
// (internal/telegramtest) and the fake model (internal/openaitest) with
// faults injected at random, seeded and reproducible: many chats at once,
// Telegram and model failures, SIGKILL and SIGTERM with restarts as a
// supervisor would. It then checks the promise that no accepted message is
// lost silently and none is answered twice. The short form runs in go test
// ./...; -chaos.long runs the soak (see docs/performance.md).
package chaostest

// Package securitytest proves, the way an attacker would try to break it,
// the product's core promise: no host secret reaches the agent, the model
// provider or the chat.
//
// Its tests build cmd/telegram-bot, run it as an unprivileged user against
// the fake Telegram and fake OpenAI servers, with secrets set in the bot's
// environment only, and script the model to ask for them through dozens of
// attack vectors (environment dumps, /proc, ptrace, files printed raw and
// encoded, truncation and progress boundaries, error paths, watcher scripts,
// an MCP server, an extension's Exec). Every channel (what the model was sent,
// what Telegram was sent, the agent dir on disk and the bot's own debug log)
// is then searched for every secret in every derived form the redactor
// promises to catch.
//
// Run it with:
//
//	go test -race -run TestSecurity -v ./securitytest
//
// docs/security.md describes the threat model the suite checks.
package securitytest

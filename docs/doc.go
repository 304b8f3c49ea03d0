// Package docs holds the project's documentation (the operator guide,
// the extension guide, the architecture, security and performance pages) and
// the tests that keep it true against the code: every environment variable
// cmd/telegram-bot reads is documented with its default, and every default
// stated in prose is the variable's; the image's variables are the
// Dockerfile's; every file of the agent dir the pages name is one the code
// keeps there, and the state table lists exactly those; the webhook's update
// types are the ones the chat host asks for; the Commands table is the
// chat's table of commands; the package list of AGENTS.md names exactly the
// directories with Go files; the approval rules named are the built-in
// ones; every Go name the guides mention exists; and
// every relative link points to a file and heading that exist.
// It has no code of its own.
package docs

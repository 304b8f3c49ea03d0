// Package docs holds the project's documentation (the operator guide,
// the extension guide, the architecture, security and performance pages) and
// the test that keeps it true: every environment variable cmd/telegram-bot
// reads is documented with its default, every Go name the guides mention
// exists in the code, and every relative link points to a file that exists.
// It has no code of its own.
package docs

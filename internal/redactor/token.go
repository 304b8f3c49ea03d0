// Package redactor replaces known secret values, raw and in their common
// encoded forms, with [Token] in text that leaves the host.
package redactor

// Token is what every occurrence of a secret becomes.
const Token = "[REDACTED]"

// MinimumSecretLength is the shortest value treated as a secret. Shorter
// values (true, admin, a port number) would redact half of any output. The
// spawn policy uses the same constant, so the two can never disagree.
const MinimumSecretLength = 8

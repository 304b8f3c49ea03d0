// Package spawnpolicy decides the complete context (command, arguments,
// working directory and environment) of every process started on the agent's
// behalf.
//
// A spawner describes what it wants in a [Request]; [Policy.Prepare] snapshots
// the host environment, removes what the deny-list, the allow-list and the
// known secret values reject, applies the request's explicit variables and
// time zone, runs the host [Hook]s in order and returns the [Context] the
// child gets. [Context.ApplyTo] copies it into an [os/exec.Cmd], whose Env is
// then never nil, so a child never inherits the host environment untouched.
//
// Precedence, for every inherited variable: a name in Withhold removes it;
// an explicit name in Deny removes it; else a name or glob in Allow keeps it; else a glob in Deny removes it;
// else a value that is a URL carrying a credential (a password, or a
// token-like query parameter: see [URLCredentials]) removes it; else a value
// that holds one of SecretValues, in any form the redactor knows (itself,
// inside a longer text, base64, hex, percent- or JSON-encoded, a run of its
// bytes), removes it; else it is kept, with its stand-in for a value when
// StandIns has one, and Extra is set over what is kept. Names and
// globs match case-insensitively, and "*" is the only wildcard. Variables the
// request sets explicitly are never filtered.
//
// Nothing in this package logs or returns a variable's value: removed names
// are logged at Debug, values never.
package spawnpolicy

package spawnpolicy

import (
	"slices"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// ruleSecretValue is the rule Explain names for a variable removed because
// its value is a known secret.
const ruleSecretValue = "secret value"

// ruleWithheld is the rule Explain names for a variable Withhold removes.
const ruleWithheld = "withheld: its credential proxy is not running"

// rules is the compiled environment filter, built once by New.
type rules struct {
	// denyNames are the explicit names in Deny: they beat Allow.
	denyNames []pattern
	// allow are the names and globs in Allow: they beat the Deny globs.
	allow []pattern
	// denyGlobs are the globs in Deny.
	denyGlobs []pattern
	// secrets finds the SecretValues long enough to count inside a value,
	// in every form it knows; nil when there are none.
	secrets *redactor.Redactor
	// withhold are the names in Withhold: they beat everything.
	withhold []pattern
}

// compileRules compiles validated options.
func compileRules(opts Options) rules {
	var r rules
	for _, name := range opts.Withhold {
		r.withhold = append(r.withhold, compilePattern(name))
	}
	for _, entry := range opts.Deny {
		p := compilePattern(entry)
		if p.glob {
			r.denyGlobs = append(r.denyGlobs, p)
		} else {
			r.denyNames = append(r.denyNames, p)
		}
	}
	for _, entry := range opts.Allow {
		r.allow = append(r.allow, compilePattern(entry))
	}
	if slices.ContainsFunc(opts.SecretValues, func(v string) bool { return len(v) >= MinimumSecretLength }) {
		r.secrets = redactor.New(opts.SecretValues)
	}
	return r
}

// removedBy applies the filter's precedence to one inherited variable: a
// name in Withhold removes it; an explicit name in Deny removes it; else a name or glob in Allow keeps it;
// else a glob in Deny removes it; else a value that is a URL carrying a
// credential removes it; else a value that holds a secret value removes it;
// else it is kept. It
// returns the rule that removes the variable (the Deny entry as configured,
// "credential URL" or "secret value") and true, or "" and false when it is
// kept.
func (r *rules) removedBy(name, value string) (string, bool) {
	for i := range r.withhold {
		if r.withhold[i].match(name) {
			return ruleWithheld, true
		}
	}
	for i := range r.denyNames {
		if r.denyNames[i].match(name) {
			return r.denyNames[i].source, true
		}
	}
	for i := range r.allow {
		if r.allow[i].match(name) {
			return "", false
		}
	}
	return r.removedAfterAllow(name, value)
}

// removedAfterAllow applies the rules that Allow wins over: a glob in Deny,
// the credential URL rule and the secret values.
func (r *rules) removedAfterAllow(name, value string) (string, bool) {
	for i := range r.denyGlobs {
		if r.denyGlobs[i].match(name) {
			return r.denyGlobs[i].source, true
		}
	}
	if credentialURL(value) {
		return ruleCredentialURL, true
	}
	if r.holdsSecret(value) {
		return ruleSecretValue, true
	}
	return "", false
}

// deniedByName reports whether a Deny entry removes a variable by its
// name alone: an explicit Deny name, or a Deny glob no Allow entry beats.
func (r *rules) deniedByName(name string) bool {
	match := func(p pattern) bool { return p.match(name) }
	if slices.ContainsFunc(r.denyNames, match) {
		return true
	}
	return !slices.ContainsFunc(r.allow, match) && slices.ContainsFunc(r.denyGlobs, match)
}

// passed reports whether Allow keeps a variable that a rule it wins over
// would otherwise remove.
func (r *rules) passed(name, value string) bool {
	for i := range r.withhold {
		if r.withhold[i].match(name) {
			return false
		}
	}
	for i := range r.denyNames {
		if r.denyNames[i].match(name) {
			return false
		}
	}
	if !slices.ContainsFunc(r.allow, func(p pattern) bool { return p.match(name) }) {
		return false
	}
	_, removed := r.removedAfterAllow(name, value)
	return removed
}

// holdsSecret reports whether value holds a secret value in any form the
// redactor knows: the value itself, or inside a longer text (a header, a
// JSON configuration), base64 (a user:token pair), hex, percent- or
// JSON-encoded, a run of its bytes. A secret an MCP server's env gets
// (${VAR}) reaches the policy only as one of SecretValues, so this rule is
// all that keeps a variable carrying one, under a name no deny rule
// matches, from every child: the agent could send it anywhere, or print it
// in a form no redactor knows.
func (r *rules) holdsSecret(value string) bool {
	return len(value) >= MinimumSecretLength && r.secrets.Redact(value) != value
}

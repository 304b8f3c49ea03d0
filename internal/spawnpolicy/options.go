package spawnpolicy

import (
	"errors"
	"fmt"
	"slices"

	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// MinimumSecretLength is the shortest SecretValues entry the policy uses;
// shorter values (true, admin, a port number) are ignored. It is the
// redactor's constant, so filtering and redaction can never disagree.
const MinimumSecretLength = redactor.MinimumSecretLength

// DefaultDeny is the default deny-list, in this order: the
// globs that catch API keys, tokens, secrets and passwords, with the "__"
// forms of Section__Key configuration variables), then the other common
// carriers of credentials (keys, personal access tokens, passwords, data
// source names, auth strings, credentials and webhook URLs, each with its
// "__" form), then the host's and the providers' own credentials by name,
// so that an Allow glob never re-admits them.
//
// DefaultDeny is a copy for reading: [DefaultOptions] builds its Deny list
// from its own fresh copy, so changing this variable changes nothing.
var DefaultDeny = defaultDeny()

// defaultDeny returns a fresh copy of the default deny-list.
func defaultDeny() []string {
	return []string{
		"*_API_KEY", "*_APIKEY", "*__APIKEY",
		"*_TOKEN", "*__*TOKEN",
		"*_SECRET", "*__*SECRET",
		"*_PASSWORD", "*__*PASSWORD",
		"*_KEY", "*__*KEY",
		"*_PAT", "*__*PAT",
		"*_PASS", "*__*PASS",
		"*_PASSWD", "*__*PASSWD",
		"*_DSN", "*__*DSN",
		"*_AUTH", "*__*AUTH",
		"*_CREDENTIALS", "*__*CREDENTIALS",
		"*_WEBHOOK_URL", "*__*WEBHOOKURL",
		"TELEGRAM_BOT_TOKEN", "OPENAI_API_KEY", "GOOGLE_CLIENT_SECRET",
		"ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "CLAUDE_CODE_OAUTH_TOKEN",
	}
}

// Options configures a [Policy].
type Options struct {
	// Deny lists names and globs removed from the inherited environment.
	// An explicit name (no "*") wins over Allow; a glob loses to it.
	Deny []string
	// Allow lists names and globs kept even when a Deny glob, the
	// credential URL rule or SecretValues would remove them. A variable
	// kept that way reaches agent processes, and its value must be a known
	// secret to the host (see [Options.Passed]).
	Allow []string
	// SecretValues removes any inherited variable whose value holds one of
	// them, whatever its name: the value itself, or the secret inside it
	// in any form the redactor knows (a header, a JSON configuration,
	// base64 of a user:token pair, hex, percent- or JSON-encoded). Values
	// shorter than [MinimumSecretLength] are ignored.
	SecretValues []string
	// Hooks run in order after the filter, on every spawn.
	Hooks []Hook
	// HardenHostProcess makes [New] harden the host process (Linux:
	// not dumpable). Turn it off only to attach a debugger.
	HardenHostProcess bool
	// Sandbox, when set, starts every prepared process through the
	// sandbox launcher ([Context.ApplyTo] routes it); nil starts them as
	// they are (AGENT_SANDBOX=off).
	Sandbox *sandbox.Launcher
	// StandIns gives, by name, the value agent processes get in place of
	// an inherited variable's own: a bound credential's stand-in, which
	// the credential proxy swaps for the real value. A variable the rules
	// remove stays removed; one they keep gets its stand-in.
	StandIns map[string]string
	// Withhold names variables removed from every prepared context
	// whatever Allow says (names, not globs): a bound credential whose
	// proxy could not start, which must never reach agent processes
	// with its real value.
	Withhold []string
	// Extra are variables every prepared context gets, set after the
	// filter and the stand-ins and before the request's own variables:
	// the proxy's HTTPS_PROXY and the CA bundle's variables.
	Extra map[string]string
	// Notices, when set, is what every prepared context reports
	// through ([Context.Notices]): the credential proxy's record of
	// clients that refused its certificate.
	Notices Notices
}

// DefaultOptions returns the options a host starts from: Deny holds a fresh
// copy of the default deny-list, and host hardening is on.
func DefaultOptions() Options {
	return Options{Deny: defaultDeny(), HardenHostProcess: true}
}

// Validate reports every configuration problem at once, joined with
// [errors.Join], or nil when the options are valid: an empty Deny or Allow
// entry, an entry with a character no variable name can hold ("*" aside),
// a name both denied explicitly and allowed explicitly, and a nil hook.
func (o Options) Validate() error {
	var problems []error
	problems = append(problems, validateEntries("deny", o.Deny)...)
	problems = append(problems, validateEntries("allow", o.Allow)...)
	for _, allowed := range o.Allow {
		if isGlob(allowed) {
			continue
		}
		for _, denied := range o.Deny {
			if !isGlob(denied) && denied != "" && equalFold(denied, allowed) {
				problems = append(problems, fmt.Errorf(
					"spawnpolicy: %q is denied explicitly (deny entry %q) and also allowed; an explicit deny always wins, so remove it from one list", allowed, denied))
				break
			}
		}
	}
	for i, h := range o.Hooks {
		if h == nil {
			problems = append(problems, fmt.Errorf("spawnpolicy: hooks[%d] is nil", i))
		}
	}
	problems = append(problems, o.validateSubstitutes()...)
	return errors.Join(problems...)
}

// validateEntries reports the empty and malformed entries of one list.
func validateEntries(list string, entries []string) []error {
	var problems []error
	for i, entry := range entries {
		if entry == "" {
			problems = append(problems, fmt.Errorf("spawnpolicy: %s entry %d is empty", list, i))
			continue
		}
		if bad, ok := invalidPatternChar(entry); ok {
			problems = append(problems, fmt.Errorf(
				"spawnpolicy: %s entry %d (%q) contains %q, which cannot be in a variable name", list, i, entry, bad))
		}
	}
	return problems
}

// Passed returns, sorted, the variables of environ that a Deny glob, the
// credential URL rule or a secret value would remove but Allow keeps: they
// reach agent processes on purpose ("use, not see"), so the host must add
// their values to the secrets it redacts. An explicit Deny name is never
// passed. The options must be valid.
func (o Options) Passed(environ map[string]string) []string {
	r := compileRules(o)
	var out []string
	for name, value := range environ {
		if r.passed(name, value) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Denied returns, sorted, the variables of environ that a Deny entry
// removes: an explicit name, or a glob that no Allow entry overrides. A
// variable removed only because its value is a credential URL or holds a
// secret value is not among them. A deny rule removes a variable because
// its name says it carries a secret, so the host adds the values of these
// variables to the secrets it redacts: the same value in a workspace file
// or a command's output must not reach the model in clear either. The
// options must be valid.
func (o Options) Denied(environ map[string]string) []string {
	r := compileRules(Options{Deny: o.Deny, Allow: o.Allow})
	var out []string
	for name := range environ {
		if r.deniedByName(name) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

package mcp

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// errHostSecret reports a ${VAR} reference whose value holds one of the
// host's own secrets.
var errHostSecret = errors.New("the host's credentials are never handed to an MCP server")

// expander expands ${VAR} references, refuses the host's secrets and
// remembers every value it filled in.
type expander struct {
	lookup func(string) (string, bool)
	// secrets finds the host's secret values to refuse (see secretForms)
	// in every form the redactor knows.
	secrets *redactor.Redactor
	// sources are the host's secrets that have a source, each with a
	// redactor of its own, to name the one a refused value holds.
	sources []secretSource
	filled  []string
}

// secretSource finds one of the host's secrets, in every form, and names
// where it came from.
type secretSource struct {
	red  *redactor.Redactor
	name string
}

// newExpander returns an expander over lookup that refuses secrets.
func newExpander(lookup func(string) (string, bool), secrets []HostSecret) *expander {
	values := make([]string, 0, len(secrets))
	var sources []secretSource
	for _, s := range secrets {
		values = append(values, s.Value)
		if forms := secretForms([]string{s.Value}); s.Source != "" && len(forms) > 0 {
			sources = append(sources, secretSource{red: redactor.New(forms), name: s.Source})
		}
	}
	return &expander{lookup: lookup, secrets: redactor.New(secretForms(values)), sources: sources}
}

// hostSecretClass names which of the host's secrets v holds: the sources
// of those it holds, or the classes of the host's secrets when none is
// known.
func (x *expander) hostSecretClass(v string) string {
	var names []string
	for _, s := range x.sources {
		if s.red.Redact(v) != v && !slices.Contains(names, s.name) {
			names = append(names, s.name)
		}
	}
	if len(names) == 0 {
		return "one of the host's own secrets (the bot token, a model, speech or Google key, a PROCESS_ENV_SECRETS value, a credential in the bot's URLs)"
	}
	return "a secret of the host's own: the value of " + strings.Join(names, ", ")
}

// secretForms returns the forms of the host's secrets a referenced value
// is searched for: each value as it is and trimmed of surrounding blanks,
// when at least MinimumSecretLength bytes long.
func secretForms(secrets []string) []string {
	var out []string
	for _, s := range secrets {
		for _, f := range []string{s, strings.TrimSpace(s)} {
			if len(f) >= MinimumSecretLength && !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// expand replaces every ${VAR} in s with the variable's value and returns
// the names it expanded. The error names each variable that is not set,
// is malformed or holds a host secret (names only, never values); an error
// for a host secret wraps errHostSecret.
func (x *expander) expand(s string) (string, []string, error) {
	var problems []string
	var names []string
	hostSecret := false
	out := varRef.ReplaceAllStringFunc(s, func(ref string) string {
		name := ref[2 : len(ref)-1]
		if !varName.MatchString(name) {
			problems = append(problems, fmt.Sprintf("%q is not a variable reference", ref))
			return ""
		}
		v, ok := x.lookup(name)
		if !ok {
			problems = append(problems, fmt.Sprintf("variable %s is not set", name))
			return ""
		}
		if x.isHostSecret(v) {
			hostSecret = true
			problems = append(problems, fmt.Sprintf("variable %s holds %s", name, x.hostSecretClass(v)))
			return ""
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		x.filled = append(x.filled, v)
		return v
	})
	// Each value may hold too little of a secret for the redactor to know
	// it (a third of it), while the value they make together holds it
	// whole: the server would get it all the same.
	if !hostSecret && len(problems) == 0 && len(names) > 0 && x.isHostSecret(out) {
		hostSecret = true
		problems = append(problems, fmt.Sprintf("the value with %s filled in holds one of the host's own secrets", strings.Join(names, ", ")))
	}
	switch {
	case hostSecret:
		return "", names, fmt.Errorf("%s: %w", strings.Join(problems, "; "), errHostSecret)
	case len(problems) > 0:
		return "", names, errors.New(strings.Join(problems, "; "))
	}
	return out, names, nil
}

// remember records v as a value handed to a server on purpose, so that
// filledIn lists it with the expanded ones.
func (x *expander) remember(v string) { x.filled = append(x.filled, v) }

// isHostSecret reports whether v holds one of the host's secrets in any
// form the redactor knows: raw, inside a longer text, base64 (a
// credentials file kept in a variable), hex, percent- or JSON-encoded, or
// a run of its bytes (half of it, which a second reference may complete).
func (x *expander) isHostSecret(v string) bool {
	return x.secrets.Redact(v) != v
}

// filledIn returns the values expansion filled in that are at least
// MinimumSecretLength bytes long, sorted, without duplicates.
func (x *expander) filledIn() []string {
	var out []string
	for _, v := range x.filled {
		if len(v) >= MinimumSecretLength {
			out = append(out, v)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

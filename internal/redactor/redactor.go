package redactor

import "strings"

// Redactor replaces every known secret value, and its derived forms, with
// [Token]. It is immutable once built and safe for concurrent use. A nil
// *Redactor redacts nothing.
type Redactor struct {
	automaton *automaton // nil when there is nothing to look for
	patterns  []string   // every pattern, sorted; kept for tests and sizing
}

// New returns a Redactor for secrets. Values shorter than
// [MinimumSecretLength] bytes are ignored and duplicates removed. Besides
// each value itself it matches, when they are at least MinimumSecretLength
// long: its base64 forms (standard and URL-safe alphabets, at every byte
// alignment inside a longer encoded stream), its percent-encoded forms
// (query and path escaping, upper- and lower-case hex), its JSON-escaped
// forms (encoding/json and JSON.stringify), its hex forms (lower and upper
// case), and for a value that spans lines its \n and \r\n variants and each
// of its lines alone.
func New(secrets []string) *Redactor {
	r := &Redactor{patterns: patterns(secrets)}
	if len(r.patterns) > 0 {
		r.automaton = newAutomaton(r.patterns)
	}
	return r
}

// Redact returns s with every occurrence of a pattern replaced by [Token].
// Where occurrences overlap or touch, their union is replaced by a single
// Token. When nothing matches it returns s itself without allocating.
func (r *Redactor) Redact(s string) string {
	if r == nil || r.automaton == nil {
		return s
	}
	_, spans := r.automaton.scan(s, 0, 0, 0, nil)
	if len(spans) == 0 {
		return s
	}
	size := len(s)
	for _, sp := range spans {
		size += len(Token) - (sp.end - sp.start)
	}
	var b strings.Builder
	b.Grow(size)
	last := 0
	for _, sp := range spans {
		b.WriteString(s[last:sp.start])
		b.WriteString(Token)
		last = sp.end
	}
	b.WriteString(s[last:])
	return b.String()
}

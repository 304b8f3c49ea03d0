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

// RedactPartial is [Redactor.Redact] for a snapshot of output that has not
// ended, such as a running command's progress. Besides replacing every
// complete occurrence, it leaves out a trailing run that is the beginning
// of a pattern, so a secret printed slowly never shows as a growing prefix;
// the final output, redacted whole, shows what follows. Complete matches
// inside that run still show as [Token]. When nothing
// matches and no pattern begins at the end it returns s itself, and it
// never allocates when nothing matches.
func (r *Redactor) RedactPartial(s string) string {
	if r == nil || r.automaton == nil {
		return s
	}
	state, spans := r.automaton.scan(s, 0, 0, 0, nil)
	cut := len(s) - int(r.automaton.depth[state])
	if len(spans) == 0 {
		return s[:cut]
	}
	var b strings.Builder
	b.Grow(cut + len(spans)*len(Token))
	last := 0
	for _, sp := range spans {
		// Text up to the match, but none of the held-back tail; the match
		// itself is complete, so it shows as the token wherever it is.
		if end := min(sp.start, cut); last < end {
			b.WriteString(s[last:end])
		}
		b.WriteString(Token)
		last = sp.end
	}
	if last < cut {
		b.WriteString(s[last:cut])
	}
	return b.String()
}

package redactor

import "strings"

// Redactor replaces every known secret value, and its derived forms, with
// [Token]. It is immutable once built and safe for concurrent use. A nil
// *Redactor redacts nothing.
type Redactor struct {
	raw      *sampler    // raw patterns, fragments included; nil when there are none
	enc      *encChannel // encoded patterns; nil exactly when raw is
	patterns patternSet  // every pattern, sorted; kept for tests and sizing

	// classes holds, per byte, symbolBit and breakBit.
	classes [256]uint32
}

// New returns a Redactor for secrets. Values shorter than
// [MinimumSecretLength] bytes are ignored and duplicates removed. Besides
// each value itself it matches, when they are at least MinimumSecretLength
// long:
//   - byte for byte: its percent-encoded forms (query and path escaping,
//     upper- and lower-case hex), its JSON-escaped forms (encoding/json and
//     JSON.stringify), its UTF-16LE and UTF-16BE forms, for a value that
//     spans lines its \n and \r\n variants and each of its lines alone, and
//     every run of fragmentLen(len) consecutive bytes of it (see fragments);
//   - with whitespace of any kind and amount between the characters, and
//     inside the layouts of xxd, od and hexdump -C (see encChannel): its
//     base64 forms (standard and URL-safe alphabets, at every byte alignment
//     inside a longer encoded stream), its base32 forms (RFC 4648, every
//     alignment), its hex forms (lower and upper case), the hex of every
//     fragment, and the base64 and base32 forms of its pieces (see
//     encodedPiece) at every alignment.
//
// So a cut, a tail or a column of text shows no more than fragmentLen-1
// consecutive bytes of a secret raw, and of its base64 form (either
// alphabet, padded or not, wrapped or not) no more than 15 consecutive
// characters that encode bits of the secret alone, 18 of its base32 form
// and 24 of its hex form: 90, 90 and 96 bits, at most 11 whole bytes, for
// secrets of 2·fragmentLength bytes or more (for shorter ones, with
// fragments of k bytes: 4(k+1)/3 - 2, 8(k+1)/5 - 2 rounded down, and 2k).
// A character at either end that mixes in bits of what surrounds the
// secret may show besides. Pieces that are mostly a public beginning (see
// publicLen) are no patterns, as fragments are not, so the bounds hold for
// the rest of the secret. Base32 is matched in upper case only, as RFC
// 4648 writes it.
func New(secrets []string) *Redactor {
	return build(patterns(secrets, fragmentLen))
}

// build returns the Redactor for ps. Every secret has patterns in both
// channels (itself, and its hex), so both channels exist or neither does.
func build(ps patternSet) *Redactor {
	r := &Redactor{patterns: ps}
	if len(ps.raw) > 0 && len(ps.encoded) > 0 {
		r.raw = newSampler(ps.raw)
		r.enc = newEncChannel(ps.encoded)
		for c := range 256 {
			switch c {
			case ' ', '\t', '\r', '\v', '\f':
			case '\n':
				r.classes[c] |= breakBit
			default:
				r.classes[c] |= symbolBit
			}
		}
	}
	return r
}

// empty reports whether r looks for nothing.
func (r *Redactor) empty() bool {
	return r == nil || r.raw == nil
}

// spans returns the merged replacement spans of s as a whole, and the
// position from which a match may still be in progress at its end. With
// atEnd, s is the whole stream: digits held at a last line's start are
// data.
func (r *Redactor) spans(s string, atEnd bool) ([]span, int) {
	var sc scanner
	sc.partial = !atEnd
	spans, enc := r.scan(&sc, s, 0, 0, nil, nil)
	pending := len(s)
	if atEnd {
		enc = r.finish(&sc, len(s), 0, enc)
	} else {
		pending = r.pending(&sc, len(s))
	}
	return unionSpans(spans, enc), pending
}

// Redact returns s with every occurrence of a pattern replaced by [Token].
// Where occurrences overlap or touch, their union is replaced by a single
// Token. When nothing matches it returns s itself without allocating.
func (r *Redactor) Redact(s string) string {
	if r.empty() {
		return s
	}
	spans, _ := r.spans(s, true)
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
// complete occurrence, it leaves out a trailing run that may still become
// part of a match (the beginning of a pattern, separators and dump columns
// inside an encoded form included), so a secret printed slowly never shows
// as a growing prefix; the final output, redacted whole, shows what
// follows. Complete matches inside that run still show as [Token]. When
// nothing matches and no pattern begins at the end it returns s itself, and
// it never allocates when nothing matches.
func (r *Redactor) RedactPartial(s string) string {
	if r.empty() {
		return s
	}
	spans, cut := r.spans(s, false)
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

// unionSpans merges two lists of spans, each sorted, disjoint and
// non-touching, into one such list. When one is empty it returns the other
// without allocating.
func unionSpans(a, b []span) []span {
	if len(b) == 0 {
		return a
	}
	if len(a) == 0 {
		return b
	}
	return mergeInto(make([]span, 0, len(a)+len(b)), a, b)
}

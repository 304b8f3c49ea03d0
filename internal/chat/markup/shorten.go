package markup

import "strings"

// Shorten returns s on one line (runs of white space made one space), at
// most n runes, ending in "…" when cut. A cut can leave a part of a
// secret's encoded form that a redaction of the whole message no longer
// recognises: s must come redacted, or use botapi's Client.Shorten.
func Shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

package redactor

import (
	"fmt"
	"testing"
)

// BenchmarkDeniedValues measures what the values of the variables a deny
// rule removes cost the redactor: a deployment's own 5 secrets (the
// baseline, in the same run) against the same 5 plus 40 such values, at a
// realistic count for a container that inherits a platform's variables.
// It times Redact over 1 MiB of log-like text without matches (the common
// case: every tool result and every message is scanned) and with some,
// and New (built once at start-up), reporting what the redactor retains.
func BenchmarkDeniedValues(b *testing.B) {
	all := benchSecrets(45)
	for _, n := range []int{5, 45} {
		secrets := all[:n]
		r := New(secrets)
		for _, matches := range []bool{false, true} {
			text := benchText(secrets, matches)
			b.Run(fmt.Sprintf("Redact/secrets=%d/matches=%v", n, matches), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				cpuLoop(b, len(text), func() { r.Redact(text) })
			})
		}
		b.Run(fmt.Sprintf("New/secrets=%d", n), func(b *testing.B) { benchNew(b, secrets) })
	}
}

package agent

import (
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// fuzzSecret is the secret of FuzzTextStream; its failures name lengths
// and positions only.
const fuzzSecret = "sk-fuzz-SECRETVALUE-0123456789"

// shownSettled reports whether shown, what a text stream showed after
// written went in, holds nothing a later delta could turn into part of
// secret: for every way the rest of the secret could follow (from each
// beginning of it that written ends in, and the whole secret after
// written), shown is a prefix of the redaction of written and that rest.
func shownSettled(red *redactor.Redactor, secret, written, shown string) bool {
	for k := range len(secret) {
		if strings.HasSuffix(written, secret[:k]) && !strings.HasPrefix(red.Redact(written+secret[k:]), shown) {
			return false
		}
	}
	return true
}

// FuzzTextStream cuts a text into deltas wherever the fuzzer says (each
// byte of cuts is the length of the next delta, the rest one delta) and
// streams them through a turn's text stream with the secret placed at
// the fuzzer's offset: what the deltas show so far is always a prefix of
// the text redacted whole and settled (see shownSettled); after the flush
// it is the text redacted whole.
func FuzzTextStream(f *testing.F) {
	f.Add("the key is  and that is all", 11, []byte{1, 2, 3, 4, 5, 6, 7, 8, 9, 10})
	f.Add("ask for ", 8, []byte{3, 3, 3})
	f.Add("", 0, []byte{1})
	f.Add("c2stZnV6ei1TRUNSRVRWQUxVRS0wMTIzNDU2Nzg5 base64", 0, []byte{7, 1, 1, 30})
	red := redactor.New([]string{fuzzSecret})
	f.Fuzz(func(t *testing.T, around string, at int, cuts []byte) {
		if len(around) > 4096 || len(cuts) > 256 {
			return
		}
		at = min(max(at, 0), len(around))
		text := around[:at] + fuzzSecret + around[at:]
		want := red.Redact(text)
		shown := ""
		check := func(written int) {
			if !strings.HasPrefix(want, shown) {
				t.Fatalf("the %d bytes shown are no prefix of the %d-byte text redacted whole", len(shown), len(want))
			}
			if !shownSettled(red, fuzzSecret, text[:written], shown) {
				t.Fatalf("after %d bytes written, the %d shown could end in part of the secret", written, len(shown))
			}
		}
		ts := newTextStream(red, func(d string) { shown += d })
		written := 0
		for _, c := range cuts {
			n := min(int(c), len(text)-written)
			ts.write(text[written : written+n])
			written += n
			check(written)
		}
		ts.write(text[written:])
		check(len(text))
		ts.flush()
		if shown != want {
			t.Fatalf("the deltas add up to %d bytes, want the %d of the text redacted whole", len(shown), len(want))
		}
	})
}

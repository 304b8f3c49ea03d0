package credproxy

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"strings"
)

// knownPrefixes are the public beginnings of well-known token formats,
// longest first, kept as they are in a stand-in so that a client's format
// check passes.
var knownPrefixes = []string{
	"github_pat_", "lin_api_", "glpat-", "pypi-", "xoxb-", "xoxp-",
	"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "npm_", "hf_", "sk-",
}

// tokenPrefix returns the public beginning of a token kept in its
// stand-in: a known prefix, or else lower-case letters up to the first "_"
// or "-" within the first eight characters ("cio_", "dop-").
func tokenPrefix(v string) string {
	for _, p := range knownPrefixes {
		if strings.HasPrefix(v, p) {
			return p
		}
	}
	for i := 0; i < len(v) && i < 8; i++ {
		c := v[i]
		if (c == '_' || c == '-') && i > 0 {
			return v[:i+1]
		}
		if c < 'a' || c > 'z' {
			break
		}
	}
	return ""
}

const (
	lowers = "abcdefghijklmnopqrstuvwxyz"
	uppers = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	digits = "0123456789"
)

// standInAttempts bounds the draws for a stand-in the redactor would know.
const standInAttempts = 32

// newStandIn returns a stand-in for real: its prefix (see tokenPrefix)
// kept, then, byte for byte, a random lower-case letter for a lower-case
// one, an upper-case letter for an upper-case one, a digit for a digit, a
// hex digit where real is hex, and every other printable ASCII byte kept
// (the "_" inside a fine-grained token, a JWT's dots); a byte that is not
// printable ASCII becomes a random letter or digit, so the stand-in is
// always printable and as long as real in bytes. known reports whether a
// candidate holds a secret the redactor knows (it would be redacted from
// what the agent sees, and could not be used); such a draw, or one equal
// to real, is drawn again.
func newStandIn(real string, random io.Reader, known func(string) bool) (string, error) {
	if random == nil {
		random = rand.Reader
	}
	prefix := tokenPrefix(real)
	body := real[len(prefix):]
	hex := isHex(body)
	buf := make([]byte, len(body))
	for range standInAttempts {
		if _, err := io.ReadFull(random, buf); err != nil {
			return "", fmt.Errorf("credproxy: draw a stand-in: %w", err)
		}
		var b strings.Builder
		b.Grow(len(real))
		b.WriteString(prefix)
		for i := 0; i < len(body); i++ {
			r := buf[i]
			switch c := body[i]; {
			case hex && isHexDigit(c):
				set := "0123456789abcdef"
				if c >= 'A' && c <= 'F' {
					set = "0123456789ABCDEF"
				}
				b.WriteByte(set[int(r)%len(set)])
			case c >= 'a' && c <= 'z':
				b.WriteByte(lowers[int(r)%len(lowers)])
			case c >= 'A' && c <= 'Z':
				b.WriteByte(uppers[int(r)%len(uppers)])
			case c >= '0' && c <= '9':
				b.WriteByte(digits[int(r)%len(digits)])
			case c > ' ' && c < 0x7f:
				b.WriteByte(c)
			default:
				const alnum = lowers + uppers + digits
				b.WriteByte(alnum[int(r)%len(alnum)])
			}
		}
		s := b.String()
		if s != real && (known == nil || !known(s)) {
			return s, nil
		}
	}
	return "", errors.New("credproxy: no stand-in the redactor does not know could be drawn (the value is too short or has too few letters and digits)")
}

// isHex reports whether s is all hex digits of one case (a classic
// 40-character token), so that its stand-in stays hex.
func isHex(s string) bool {
	if len(s) < 16 {
		return false
	}
	upper, lower := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
		case c >= 'a' && c <= 'f':
			lower = true
		case c >= 'A' && c <= 'F':
			upper = true
		default:
			return false
		}
	}
	return !(upper && lower)
}

func isHexDigit(c byte) bool {
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')
}

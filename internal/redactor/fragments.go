package redactor

import (
	"encoding/base64"
	"encoding/json"
	"strings"
)

// fragmentLength is the number of consecutive bytes of a secret (of at
// least twice this length) that is redacted wherever it appears on its
// own: a cut, the start or end of a tail, or the text column of a hex dump
// cannot show more of a secret than fragmentLength-1 bytes in a row. The
// value is chosen by measurement against text that holds no secret (see
// docs/performance.md): at 12, a thousand random and twenty realistic
// secrets redact nothing in the Go source tree and /usr/share/doc.
const fragmentLength = 12

// fragmentLen returns the fragment length for a secret of n bytes:
// fragmentLength, or for a secret shorter than twice that, half its length
// rounded up, but never less than MinimumSecretLength.
func fragmentLen(n int) int {
	if n >= 2*fragmentLength {
		return fragmentLength
	}
	return max(MinimumSecretLength, (n+1)/2)
}

// publicPrefixes returns the beginnings that well-known credentials share:
// a piece of a secret that is mostly one of them is not secret, and matching
// it would redact every mention of the kind of token.
func publicPrefixes() []string {
	return []string{
		"github_pat_", "ghp_", "gho_", "ghu_", "ghs_", "ghr_",
		"sk-proj-", "sk-ant-api03-", "sk-ant-", "sk-",
		"xoxb-", "xoxp-", "xoxa-", "xapp-", "glpat-",
		"AKIA", "ASIA", "AIza", "ya29.",
	}
}

// publicLen returns the length of the beginning of secret that is the
// same across credentials of its kind: a JWT's header and payload (base64
// JSON that anyone holding the token reads, and whose header is the same
// in every token signed the same way), a Telegram bot token's bot id, or
// the longest of publicPrefixes.
func publicLen(secret string) int {
	if i := jwtSignature(secret); i > 0 {
		return i
	}
	if i := strings.IndexByte(secret, ':'); i >= 6 && i <= 12 && strings.Trim(secret[:i], "0123456789") == "" {
		return i + 1
	}
	n := 0
	for _, p := range publicPrefixes() {
		if strings.HasPrefix(secret, p) {
			n = max(n, len(p))
		}
	}
	return n
}

// jwtSignature returns the offset of the signature of a JWT (three
// base64url parts joined by dots, the first a JSON object), or 0 when
// secret is not one.
func jwtSignature(secret string) int {
	parts := strings.Split(secret, ".")
	if len(parts) != 3 || parts[2] == "" {
		return 0
	}
	header, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return 0
	}
	var obj map[string]any
	if json.Unmarshal(header, &obj) != nil {
		return 0
	}
	return len(parts[0]) + 1 + len(parts[1]) + 1
}

// encodedPiece returns the length and the spacing of the pieces of a
// secret whose base64 and base32 forms are encoded patterns, for fragments
// of k bytes. A run of the characters of a secret's base64 form (6 bits a
// character) or base32 form (5 bits) that each encode bits of the secret
// alone starts at bit b·a and covers b·L bits; the form of the piece at
// stream byte j (its characters that encode the piece's bits alone) lies
// inside it when b·(a-1) < 8j and 8j+8·size < b·(a+L+1). The pieces start
// every step bytes, so the run holds one whenever that open interval,
// b·L+2b-8·size bits long, is longer than 8·step bits, and misses them all
// at worst when it is not: the longest run that can pass holds
// (8·size+8·step-2b)/b characters, rounded down. For fragments of 12 bytes,
// pieces of 10 bytes every 3 bytes give 15 base64 and 18 base32
// characters (90 bits: at most 11 whole bytes, as the raw fragments show),
// the same bound as the forms of every fragment (12 bytes every byte) with
// a third of the patterns. Shorter fragments (secrets shorter than
// 2·fragmentLength) are their own pieces, every byte: their forms would
// otherwise be shorter than MinimumSecretLength.
func encodedPiece(k int) (size, step int) {
	if k >= fragmentLength {
		return k - 2, 3
	}
	return k, 1
}

// fragments returns every run of k consecutive bytes of secret
// (and of its \n and \r\n variants when it spans lines) that has at least
// half its bytes outside the secret's public parts (see public). Any longer
// run of the secret is a union of these, so it is redacted whole.
func fragments(secret string, k int) []string {
	return pieces(secret, k, 1)
}

// pieces returns the runs of fragments that start every step bytes from
// the beginning of secret or of its variant.
func pieces(secret string, k, step int) []string {
	values := []string{secret}
	if strings.ContainsAny(secret, "\r\n") {
		lf := strings.ReplaceAll(secret, "\r\n", "\n")
		values = append(values, lf, strings.ReplaceAll(lf, "\n", "\r\n"))
	}
	var out []string
	for _, v := range values {
		pub := public(v)
		// secretBytes[i] counts the bytes before i that are not public.
		secretBytes := make([]int, len(v)+1)
		for i := range len(v) {
			secretBytes[i+1] = secretBytes[i]
			if !pub[i] {
				secretBytes[i+1]++
			}
		}
		for i := 0; i+k <= len(v); i += step {
			if secretBytes[i+k]-secretBytes[i] >= (k+1)/2 {
				out = append(out, v[i:i+k])
			}
		}
	}
	return out
}

// public marks the bytes of value that are the same across credentials of
// its kind: its public beginning (publicLen) and the armour lines of a PEM
// block ("-----BEGIN PRIVATE KEY-----"), line break included.
func public(value string) []bool {
	pub := make([]bool, len(value))
	for i := range publicLen(value) {
		pub[i] = true
	}
	for start := 0; start < len(value); {
		end := strings.IndexByte(value[start:], '\n')
		if end < 0 {
			end = len(value)
		} else {
			end += start + 1
		}
		if isArmour(strings.TrimRight(value[start:end], "\r\n")) {
			for i := start; i < end; i++ {
				pub[i] = true
			}
		}
		start = end
	}
	return pub
}

// isArmour reports whether line is a PEM block's first or last line.
func isArmour(line string) bool {
	return (strings.HasPrefix(line, "-----BEGIN ") || strings.HasPrefix(line, "-----END ")) && strings.HasSuffix(line, "-----")
}

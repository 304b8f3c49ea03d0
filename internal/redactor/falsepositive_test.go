package redactor

import (
	"bytes"
	"compress/gzip"
	"encoding/base32"
	"encoding/base64"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var corpusFlag = flag.String("corpus", "", "colon-separated folders for TestFalsePositivesCorpus, e.g. \"$(go env GOROOT)/src:/usr/share/doc\"")

// fpSecret is a secret of the false-positive measurement, with a name to
// report it by (its value is never printed).
type fpSecret struct{ name, value string }

// fpSecrets returns the measurement's secrets: 1000 random ones (8 to 64
// bytes from five alphabets) and 21 realistic ones (a PEM private key
// among them), all made up here from a fixed seed.
func fpSecrets() []fpSecret {
	rng := rand.New(rand.NewPCG(2026, 18))
	const (
		lower  = "abcdefghijklmnopqrstuvwxyz"
		upper  = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
		digits = "0123456789"
		alnum  = upper + lower + digits
		b64url = alnum + "-_"
		hexd   = digits + "abcdef"
		print  = alnum + "!#$%&()*+,-./:;<=>?@[]^_{|}~"
	)
	pick := func(alphabet string, n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	var out []fpSecret
	alphabets := []struct{ name, chars string }{
		{"alnum", alnum}, {"base64url", b64url}, {"hex", hexd}, {"printable", print}, {"lower", lower + digits},
	}
	for i := range 1000 {
		a := alphabets[i%len(alphabets)]
		out = append(out, fpSecret{fmt.Sprintf("random %d (%s)", i, a.name), pick(a.chars, 8+rng.IntN(57))})
	}
	jwt := func(payload string) string {
		header := base64.RawURLEncoding.EncodeToString([]byte(`{"alg":"HS256","typ":"JWT"}`))
		body := base64.RawURLEncoding.EncodeToString([]byte(payload))
		return header + "." + body + "." + pick(b64url, 43)
	}
	return append(out,
		fpSecret{"GitHub classic PAT", "ghp_" + pick(alnum, 36)},
		fpSecret{"GitHub classic PAT 2", "ghp_" + pick(alnum, 36)},
		fpSecret{"GitHub fine-grained PAT", "github_pat_11" + pick(upper+digits, 22) + "_" + pick(alnum, 59)},
		fpSecret{"OpenAI project key", "sk-proj-" + pick(b64url, 48) + "T3BlbkFJ" + pick(b64url, 48)},
		fpSecret{"OpenAI legacy key", "sk-" + pick(alnum, 48)},
		fpSecret{"Anthropic key", "sk-ant-api03-" + pick(b64url, 95)},
		fpSecret{"JWT", jwt(`{"sub":"user-4711","scope":"deploy","iat":1767225600}`)},
		fpSecret{"JWT 2", jwt(`{"iss":"https://auth.example.org","aud":"api","exp":1798761600}`)},
		fpSecret{"Telegram bot token", "7123456789:AAH" + pick(b64url, 32)},
		fpSecret{"AWS access key id", "AKIA" + pick(upper+digits, 16)},
		fpSecret{"AWS secret key", pick(alnum+"+/", 40)},
		fpSecret{"Slack bot token", "xoxb-" + pick(digits, 12) + "-" + pick(digits, 13) + "-" + pick(alnum, 24)},
		fpSecret{"Google API key", "AIza" + pick(b64url, 35)},
		fpSecret{"Google client secret", "GOCSPX-" + pick(b64url, 28)},
		fpSecret{"webhook secret", pick(hexd, 64)},
		fpSecret{"password xkcd", "correct-horse-battery-staple"},
		fpSecret{"password leet", "Tr0ub4dor&3"},
		fpSecret{"password sentence", "MyDogRex-was-born-in-2019!"},
		fpSecret{"password season", "Autumn2026!Berlin"},
		fpSecret{"password pin-like", "hunter2-hunter2"},
		fpSecret{"PEM private key", "-----BEGIN PRIVATE KEY-----\n" + wrap(base64.StdEncoding.EncodeToString([]byte(pick(print, 1190))), 64, "\n") + "\n-----END PRIVATE KEY-----"},
	)
}

// fpVariant is a fragment length rule to measure.
type fpVariant struct {
	name    string
	fragLen func(int) int
}

func fpVariants() []fpVariant {
	rule := func(k int) func(int) int {
		return func(n int) int {
			if n >= 2*k {
				return k
			}
			return max(MinimumSecretLength, (n+1)/2)
		}
	}
	return []fpVariant{
		{"no fragments", nil},
		{"K=8", rule(8)},
		{"K=10", rule(10)},
		{"K=12 (chosen)", fragmentLen},
		{"K=16", rule(16)},
	}
}

// fpTexts calls visit with every text the measurement redacts for one
// file: its content (decompressed when it is gzip) and, of its first 1 KiB,
// the xxd, hexdump -C and od dumps and the base64 and base32 encodings
// wrapped at 76 columns, so that the layout reading meets text no one here
// wrote.
func fpTexts(name string, data []byte, visit func(what, text string)) {
	if strings.HasSuffix(name, ".gz") {
		if zr, err := gzip.NewReader(bytes.NewReader(data)); err == nil {
			if plain, err := io.ReadAll(io.LimitReader(zr, 16<<20)); err == nil {
				data = plain
			}
		}
	}
	visit("content", string(data))
	head := data[:min(len(data), 1024)]
	visit("xxd", xxdDump(head, false))
	visit("hexdump -C", hexdumpC(head))
	visit("od", odDump(head, true))
	visit("base64", wrap(base64.StdEncoding.EncodeToString(head), 76, "\n"))
	visit("base32", wrap(base32.StdEncoding.EncodeToString(head), 76, "\n"))
}

// fpDetails is how many findings per variant get their culprits named
// (finding them builds a redactor per secret).
const fpDetails = 20

// fpFinding is one redaction of text that holds no secret.
type fpFinding struct {
	File, What, Secret string
	Offset, Length     int
}

// fpMeasure redacts every text of every file under roots with each
// variant's redactor and returns, per variant, the redactions (none is
// expected: the texts hold none of the secrets), and the bytes scanned.
func fpMeasure(t *testing.T, roots []string, variants []fpVariant) (map[string][]fpFinding, int64) {
	t.Helper()
	secrets := fpSecrets()
	values := make([]string, len(secrets))
	for i, s := range secrets {
		values[i] = s.value
	}
	redactors := make([]*Redactor, len(variants))
	for i, v := range variants {
		redactors[i] = build(patterns(values, v.fragLen))
	}
	findings := make(map[string][]fpFinding)
	var scanned int64
	for _, root := range roots {
		err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || !d.Type().IsRegular() {
				return nil // unreadable folders and special files are not text
			}
			info, err := d.Info()
			if err != nil || info.Size() > 32<<20 {
				return nil
			}
			data, err := os.ReadFile(path)
			if err != nil {
				return nil
			}
			fpTexts(path, data, func(what, text string) {
				scanned += int64(len(text))
				for i, r := range redactors {
					spans, _ := r.spans(text, true)
					for _, sp := range spans {
						f := fpFinding{File: path, What: what, Offset: sp.start, Length: sp.end - sp.start}
						if len(findings[variants[i].name]) < fpDetails {
							f.Secret = culprit(secrets, variants[i].fragLen, text[sp.start:sp.end])
						}
						findings[variants[i].name] = append(findings[variants[i].name], f)
					}
				}
			})
			return nil
		})
		if err != nil {
			t.Fatalf("walking %s: %v", root, err)
		}
	}
	return findings, scanned
}

// culprit names the secrets whose patterns match text.
func culprit(secrets []fpSecret, fragLen func(int) int, text string) string {
	var names []string
	for _, s := range secrets {
		if build(patterns([]string{s.value}, fragLen)).Redact(text) != text {
			names = append(names, fmt.Sprintf("%s (length %d)", s.name, len(s.value)))
		}
	}
	return strings.Join(names, ", ")
}

// TestFalsePositivesSample redacts the fixed sample in testdata/fp (Go
// source and Debian documentation, chosen for their hex and base64 test
// vectors, a JWT and changelog text) with the 1020 secrets of the
// measurement, and wants no redaction at all.
func TestFalsePositivesSample(t *testing.T) {
	findings, scanned := fpMeasure(t, []string{filepath.Join("testdata", "fp")}, []fpVariant{{"K=12", fragmentLen}})
	if scanned < 100<<10 {
		t.Fatalf("the sample is only %d bytes", scanned)
	}
	for _, f := range findings["K=12"] {
		t.Errorf("%s (%s) at %d: %d bytes redacted, matching %s", f.File, f.What, f.Offset, f.Length, f.Secret)
	}
}

// TestFalsePositivesCorpus is the full measurement; it runs only when
// given folders: go test -run TestFalsePositivesCorpus -v
// ./internal/redactor/ -args -corpus="$(go env GOROOT)/src:/usr/share/doc".
// It reports every variant's redactions and fails on any with the chosen
// fragment length.
func TestFalsePositivesCorpus(t *testing.T) {
	if *corpusFlag == "" {
		t.Skip("needs -corpus (folders of text that holds no secret)")
	}
	variants := fpVariants()
	findings, scanned := fpMeasure(t, filepath.SplitList(*corpusFlag), variants)
	t.Logf("%d secrets, %.1f MB of text scanned per variant", len(fpSecrets()), float64(scanned)/1e6)
	for _, v := range variants {
		fs := findings[v.name]
		t.Logf("%-14s %d redactions", v.name, len(fs))
		for i, f := range fs {
			if i == fpDetails {
				t.Logf("    ... %d more", len(fs)-i)
				break
			}
			b, _ := json.Marshal(f)
			t.Logf("    %s", b)
		}
	}
	if n := len(findings["K=12 (chosen)"]); n > 0 {
		t.Errorf("%d redactions of text that holds no secret with the chosen fragment length", n)
	}
}

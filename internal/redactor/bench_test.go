package redactor

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"math/rand/v2"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"testing"
)

// benchSecrets returns n realistic secrets: API keys, bot tokens, GitHub
// tokens and passwords.
func benchSecrets(n int) []string {
	const b62 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	const b64url = b62 + "-_"
	rng := rand.New(rand.NewPCG(42, 1))
	pick := func(alphabet string, k int) string {
		b := make([]byte, k)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	secrets := make([]string, n)
	for i := range secrets {
		switch i % 4 {
		case 0:
			secrets[i] = "sk-proj-" + pick(b62, 48)
		case 1:
			secrets[i] = fmt.Sprintf("%d:AA%s", 1000000000+rng.IntN(900000000), pick(b64url, 33))
		case 2:
			secrets[i] = "ghp_" + pick(b62, 36)
		default:
			secrets[i] = pick(b62+"!@#$%^&*", 20)
		}
	}
	return secrets
}

// benchText returns about 1 MiB of log-like text; with matches, a few of
// the secrets appear in it, raw and encoded.
func benchText(secrets []string, matches bool) string {
	rng := rand.New(rand.NewPCG(7, 7))
	levels := []string{"DEBUG", "INFO", "INFO", "INFO", "WARN", "ERROR"}
	msgs := []string{
		"request completed", "cache miss for key", "retrying connection to upstream",
		"tool bash finished", "sending message to chat", "scheduled job fired",
		"model response streamed", "file written atomically",
	}
	paths := []string{"/api/v1/users", "/bot/getUpdates", "/v1/chat/completions", "/healthz", "/static/app.js"}
	var b strings.Builder
	line := 0
	for b.Len() < 1<<20 {
		fmt.Fprintf(&b, "2026-03-%02dT%02d:%02d:%02d.%03dZ %-5s %s path=%s?page=%d status=%d dur=%d.%dms req_id=%016x user=user%d@example.com\n",
			1+rng.IntN(28), rng.IntN(24), rng.IntN(60), rng.IntN(60), rng.IntN(1000),
			levels[rng.IntN(len(levels))], msgs[rng.IntN(len(msgs))], paths[rng.IntN(len(paths))],
			rng.IntN(50), []int{200, 200, 200, 404, 500}[rng.IntN(5)], rng.IntN(900), rng.IntN(10),
			rng.Uint64(), rng.IntN(1000))
		line++
		if matches && line%800 == 0 {
			s := secrets[rng.IntN(len(secrets))]
			switch (line / 800) % 4 {
			case 0:
				fmt.Fprintf(&b, "env TOKEN=%s\n", s)
			case 1:
				fmt.Fprintf(&b, "Authorization: Basic %s\n", base64.StdEncoding.EncodeToString([]byte("user:"+s)))
			case 2:
				fmt.Fprintf(&b, "GET https://example.com/cb?token=%s\n", url.QueryEscape(s))
			default:
				fmt.Fprintf(&b, "dump %s\n", hex.EncodeToString([]byte(s)))
			}
		}
	}
	return b.String()
}

var benchSizes = []int{10, 100, 1000}

// benchCases runs run as a sub-benchmark for every number of secrets, over
// the text with and without matches, counting the text's bytes. Setup done
// in run before its first b.Loop call is not timed.
func benchCases(b *testing.B, run func(b *testing.B, r *Redactor, secrets []string, text string)) {
	for _, n := range benchSizes {
		secrets := benchSecrets(n)
		r := New(secrets)
		for _, matches := range []bool{false, true} {
			text := benchText(secrets, matches)
			b.Run(fmt.Sprintf("secrets=%d/matches=%v", n, matches), func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				run(b, r, secrets, text)
			})
		}
	}
}

func BenchmarkRedact(b *testing.B) {
	benchCases(b, func(b *testing.B, r *Redactor, _ []string, text string) {
		cpuLoop(b, len(text), func() { r.Redact(text) })
		b.ReportMetric(float64(len(r.patterns.raw)+len(r.patterns.encoded)), "patterns")
	})
}

// cpuLoop runs f in the benchmark loop on one locked thread and reports,
// besides the wall-clock figures, the throughput by that thread's CPU time
// (cpu-MB/s), which other processes on the machine disturb far less.
func cpuLoop(b *testing.B, size int, f func()) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	start := threadCPU()
	n := 0
	for b.Loop() {
		f()
		n++
	}
	if cpu := threadCPU() - start; cpu > 0 {
		b.ReportMetric(float64(size)*float64(n)/cpu.Seconds()/1e6, "cpu-MB/s")
	}
}

// BenchmarkStdlibReplacer is the baseline, in the same run: every
// contiguous form of the same secrets (raw, percent, JSON, UTF-16, base64,
// base32, hex; no fragments, no separators) through strings.NewReplacer.
func BenchmarkStdlibReplacer(b *testing.B) {
	benchCases(b, func(b *testing.B, _ *Redactor, secrets []string, text string) {
		forms := contiguousForms(secrets)
		pairs := make([]string, 0, 2*len(forms))
		for _, p := range forms {
			pairs = append(pairs, p, Token)
		}
		rep := strings.NewReplacer(pairs...)
		rep.Replace(text) // builds the replacer's lookup tables
		cpuLoop(b, len(text), func() { rep.Replace(text) })
		b.ReportMetric(float64(len(forms)), "patterns")
	})
}

// BenchmarkWriter streams the same text through a Writer in 32 KiB writes,
// the size of a pipe read.
func BenchmarkWriter(b *testing.B) {
	benchCases(b, func(b *testing.B, r *Redactor, _ []string, text string) {
		data := []byte(text)
		cpuLoop(b, len(text), func() {
			w := r.NewWriter(io.Discard)
			for i := 0; i < len(data); i += 32 << 10 {
				if _, err := w.Write(data[i:min(i+32<<10, len(data))]); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.Close(); err != nil {
				b.Fatal(err)
			}
		})
	})
}

// BenchmarkNew measures building a redactor: the time and what is
// allocated on the way (B/op), and what the finished redactor holds
// (retained-MB) and its patterns.
func BenchmarkNew(b *testing.B) {
	for _, n := range benchSizes {
		secrets := benchSecrets(n)
		b.Run(fmt.Sprintf("secrets=%d", n), func(b *testing.B) { benchNew(b, secrets) })
	}
}

// benchNew times New over secrets and reports what the redactor retains
// and its patterns.
func benchNew(b *testing.B, secrets []string) {
	b.ReportAllocs()
	var r *Redactor
	for b.Loop() {
		r = New(secrets)
	}
	b.ReportMetric(float64(r.size())/1e6, "retained-MB")
	b.ReportMetric(float64(len(r.patterns.raw)+len(r.patterns.encoded)), "patterns")
}

// size returns the bytes r's samplers hold.
func (r *Redactor) size() int {
	total := 0
	if r.raw == nil {
		return 0
	}
	for _, m := range []*sampler{r.raw, r.enc.m} {
		// Strings by their data and header.
		for _, p := range m.patterns {
			total += len(p) + 16
		}
		total += 8*(len(m.bits)+len(m.firstBits)+len(m.keys)+len(m.entry)) + 4*len(m.runs)
	}
	return total
}

// contiguousForms returns every contiguous form of secrets that the
// redactor matches, longest first (strings.Replacer prefers the earlier of
// two patterns at one position): each base value, its raw forms and its
// encoded forms, without fragments.
func contiguousForms(secrets []string) []string {
	set := make(map[string]struct{})
	for _, s := range secrets {
		if len(s) < MinimumSecretLength {
			continue
		}
		for _, v := range baseValues(s) {
			for _, f := range append(append([]string{v}, rawForms(v)...), encodedForms(v)...) {
				if len(f) >= MinimumSecretLength {
					set[f] = struct{}{}
				}
			}
		}
	}
	out := sortedKeys(set)
	slices.SortStableFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

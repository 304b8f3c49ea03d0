package credproxy_test

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/credproxy"
)

// benchPayload returns n bytes of JSON as an API answers it (records of
// names, numbers, URLs and a short hash), so the redactor scans what it
// would in production.
func benchPayload(n int) []byte {
	var b []byte
	for i := 0; len(b) < n; i++ {
		id := make([]byte, 6)
		rand.Read(id)
		b = fmt.Appendf(b, `{"id":%d,"name":"repository-%d","full_name":"octocat/repository-%d","private":false,"html_url":"https://github.com/octocat/repository-%d","description":"A repository for the benchmark, number %d","sha":"%x","stargazers_count":%d},`+"\n", i, i, i, i, i, id, i*7)
	}
	return b[:n]
}

// benchSetup is a fake upstream for a bound and an unbound host, a proxy,
// and three clients: direct (to the fake, same TLS), through the proxy to
// the bound host (TLS terminated, the token swapped, the answer
// redacted), and through the proxy to the unbound host (a tunnel).
type benchSetup struct {
	direct, proxied, floor *http.Client
	standIn                string
}

func newBenchSetup(b *testing.B, handler http.Handler) *benchSetup {
	b.Helper()
	pki := newTestPKI(b)
	up := newUpstream(b, pki, handler, "api.github.com", "elsewhere.example.net")
	dns := fakeDNS{"api.github.com": up.addr(), "elsewhere.example.net": up.addr()}
	// No logger: the test recorder would keep every line of the run.
	p, err := credproxy.Start(credproxy.Config{Credentials: ghCreds(), Named: []string{"api.github.com", "elsewhere.example.net"}},
		credproxy.WithRoots(pki.pool), credproxy.WithResolver(dns.resolve))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { p.Close() })
	proxied := client(b, p)
	proxied.Transport.(*http.Transport).TLSClientConfig.RootCAs.AddCert(pki.cert)
	direct := &http.Client{Transport: &http.Transport{
		TLSClientConfig: &tls.Config{RootCAs: pki.pool},
		DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
			return (&net.Dialer{}).DialContext(ctx, network, up.addr().String())
		},
	}}
	floor := startFloorProxy(b, pki.serverCert(b, "api.github.com"), pki.pool, up.addr().String())
	return &benchSetup{direct: direct, proxied: proxied, floor: floor.c, standIn: p.StandIns()["GH_TOKEN"]}
}

// get fetches url with the token and drains the answer.
func get(b *testing.B, c *http.Client, url, token string) int64 {
	req, _ := http.NewRequest("GET", url, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := c.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	n, err := io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 {
		b.Fatalf("status %d, %v", resp.StatusCode, err)
	}
	return n
}

// target is one way to the fake upstream.
type target struct {
	name, url, token string
	c                *http.Client
}

// alternate runs one get on each target per iteration, timing each
// apart, so that all see the same load on a shared machine; it reports
// each target's time per get (<name>-ns/get), throughput of size bytes
// (<name>-MB/s), and the ratio of each proxied time to the direct one.
//
// It reports the process's CPU time per get too (<name>-cpu-ns/get, and
// <name>/direct-cpu): the client, the proxy and the fake all run in this
// process, so that is the work each way costs, which the machine's load
// does not change as it changes the wall clock.
func alternate(b *testing.B, size int64, ts []target) {
	spent := make([]time.Duration, len(ts))
	cpu := make([]time.Duration, len(ts))
	n := 0
	for b.Loop() {
		for i, t := range ts {
			start, startCPU := time.Now(), processCPU()
			if got := get(b, t.c, t.url, t.token); got != size {
				b.Fatalf("%s: got %d bytes, want %d", t.name, got, size)
			}
			spent[i] += time.Since(start)
			cpu[i] += processCPU() - startCPU
		}
		n++
	}
	for i, t := range ts {
		per := float64(spent[i].Nanoseconds()) / float64(n)
		perCPU := float64(cpu[i].Nanoseconds()) / float64(n)
		b.ReportMetric(per, t.name+"-ns/get")
		b.ReportMetric(perCPU, t.name+"-cpu-ns/get")
		b.ReportMetric(float64(size)/per*1e3, t.name+"-MB/s")
		if i > 0 {
			b.ReportMetric(per/(float64(spent[0].Nanoseconds())/float64(n)), t.name+"/direct")
			b.ReportMetric(float64(cpu[i])/float64(cpu[0]), t.name+"/direct-cpu")
		}
	}
}

// processCPU returns the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkGet1KB is a 1 KB GET on a kept-alive connection: direct, and
// through the proxy to a bound host (the token swapped in, the answer
// matched for the real value) and to an unbound one (a tunnel), the three
// alternating.
func BenchmarkGet1KB(b *testing.B) {
	body := benchPayload(1024)
	s := newBenchSetup(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
	ts := []target{
		{"direct", "https://api.github.com/x", realGH, s.direct},
		{"bound", "https://api.github.com/x", s.standIn, s.proxied},
		{"tunnel", "https://elsewhere.example.net/x", s.standIn, s.proxied},
		{"floor", "https://api.github.com/x", realGH, s.floor},
	}
	for range 200 { // the connections, kept alive, and a warm heap
		for _, t := range ts {
			get(b, t.c, t.url, t.token)
		}
	}
	b.ResetTimer()
	alternate(b, 1024, ts)
}

// BenchmarkDownload100MB downloads 100 MB direct, through the proxy from a
// bound host and through a tunnel, alternating, and reports the peak heap
// in use while they stream (peak-heap-MB: the whole process, client,
// proxy and fake upstream, above what it held before).
func BenchmarkDownload100MB(b *testing.B) {
	const size = 100 << 20
	chunk := benchPayload(1 << 20)
	s := newBenchSetup(b, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", strconv.Itoa(size))
		for sent := 0; sent < size; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	ts := []target{
		{"direct", "https://api.github.com/big", realGH, s.direct},
		{"bound", "https://api.github.com/big", s.standIn, s.proxied},
		{"tunnel", "https://elsewhere.example.net/big", s.standIn, s.proxied},
		{"floor", "https://api.github.com/big", realGH, s.floor},
	}
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	done := make(chan struct{})
	go func() {
		t := time.NewTicker(20 * time.Millisecond)
		defer t.Stop()
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-t.C:
				runtime.ReadMemStats(&m)
				if m.HeapInuse > peak.Load() {
					peak.Store(m.HeapInuse)
				}
			}
		}
	}()
	b.ResetTimer()
	alternate(b, size, ts)
	close(done)
	grown := int64(peak.Load()) - int64(before.HeapInuse)
	b.ReportMetric(float64(max(grown, 0))/(1<<20), "peak-heap-MB")
}

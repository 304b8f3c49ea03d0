package credproxy_test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/credproxy"
	"github.com/volcanic/telegram-agent/internal/logtest"
)

// Fake credentials, in the formats the stand-ins keep.
const (
	realGH  = "ghp_R3alT0kenF0rTestsOnly1234567890abcd"
	realNPM = "npm_Real0NpmToken0ForTests0Only0123456789"
)

// testPKI is a CA the fake upstreams' certificates come from: the proxy
// is told to trust it (WithRoots) in place of the system's roots.
type testPKI struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestPKI(t testing.TB) *testPKI {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "fake upstream root"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return &testPKI{cert: cert, key: key, pool: pool}
}

// serverCert returns a certificate for names.
func (k *testPKI) serverCert(t testing.TB, names ...string) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: names[0]}, DNSNames: names,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, k.cert, &key.PublicKey, k.key)
	if err != nil {
		t.Fatal(err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
}

// seen is what a fake upstream received, one entry a request.
type seen struct {
	Host, Method, Path, RawQuery, Authorization, Body string
}

// upstream is a fake HTTPS server on loopback for some host names.
type upstream struct {
	srv *httptest.Server
	mu  sync.Mutex
	got []seen
}

// newUpstream starts a TLS fake for names; handler nil answers 200 with
// "ok" (and echoes the Authorization header it got when the path is
// /echo).
func newUpstream(t testing.TB, pki *testPKI, handler http.Handler, names ...string) *upstream {
	t.Helper()
	return newUpstreamWith(t, pki, handler, nil, names...)
}

// newUpstreamWith is newUpstream with configure changing the server
// before it starts.
func newUpstreamWith(t testing.TB, pki *testPKI, handler http.Handler, configure func(*http.Server), names ...string) *upstream {
	t.Helper()
	u := &upstream{}
	u.srv = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		u.mu.Lock()
		u.got = append(u.got, seen{Host: r.Host, Method: r.Method, Path: r.URL.Path, RawQuery: r.URL.RawQuery, Authorization: r.Header.Get("Authorization"), Body: string(body)})
		u.mu.Unlock()
		if handler != nil {
			r.Body = io.NopCloser(bytes.NewReader(body))
			handler.ServeHTTP(w, r)
			return
		}
		if r.URL.Path == "/echo" {
			io.WriteString(w, "you sent: "+r.Header.Get("Authorization"))
			return
		}
		io.WriteString(w, "ok")
	}))
	u.srv.TLS = &tls.Config{Certificates: []tls.Certificate{pki.serverCert(t, names...)}}
	if configure != nil {
		configure(u.srv.Config)
	}
	u.srv.StartTLS()
	t.Cleanup(u.srv.Close)
	return u
}

func (u *upstream) addr() netip.AddrPort {
	return netip.MustParseAddrPort(u.srv.Listener.Addr().String())
}

func (u *upstream) requests() []seen {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]seen(nil), u.got...)
}

// fakeDNS answers for the names it maps, with the fake upstream's address
// and port whatever port was asked, and fails for the rest: no test
// reaches the network or edits /etc/hosts.
type fakeDNS map[string]netip.AddrPort

func (d fakeDNS) resolve(_ context.Context, host, port string) ([]netip.AddrPort, error) {
	if a, ok := d[host]; ok {
		return []netip.AddrPort{a}, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		p, _ := netip.ParseAddrPort(net.JoinHostPort(a.String(), port))
		return []netip.AddrPort{p}, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

// startProxy starts a proxy with cfg, trusting pki and resolving with dns;
// the log goes to the returned recorder.
func startProxy(t testing.TB, cfg credproxy.Config, pki *testPKI, dns fakeDNS) (*credproxy.Proxy, *logtest.Recorder) {
	t.Helper()
	rec := logtest.New()
	cfg.Logger = rec.Logger()
	p, err := credproxy.Start(cfg, credproxy.WithRoots(pki.pool), credproxy.WithResolver(dns.resolve))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, rec
}

// client returns an HTTP client that goes through p and trusts its CA
// (and nothing else), as an agent process would with the bundle.
func client(t testing.TB, p *credproxy.Proxy) *http.Client {
	t.Helper()
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(p.CAPEM()) {
		t.Fatal("the CA PEM does not parse")
	}
	proxyURL, _ := url.Parse(p.URL())
	return &http.Client{Transport: &http.Transport{
		Proxy:           http.ProxyURL(proxyURL),
		TLSClientConfig: &tls.Config{RootCAs: pool},
	}, Timeout: 30 * time.Second}
}

// writeBundle writes p's bundle (with the fake upstreams' root as the
// "system" roots) into a temporary directory and returns its path.
func writeBundle(t testing.TB, p *credproxy.Proxy, pki *testPKI) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "ca", "bundle.pem")
	if err := p.WriteBundle(path, pemCert(pki.cert)); err != nil {
		t.Fatal(err)
	}
	return path
}

func pemCert(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

// leaks reports, without printing it, whether s holds value.
func leaks(s, value string) bool { return bytes.Contains([]byte(s), []byte(value)) }

// ensureNoEnv keeps the test process's own proxy settings out of the way.
func init() {
	for _, v := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"} {
		if os.Getenv(v) != "" {
			panic("the tests need no proxy in their own environment; unset " + v)
		}
	}
}

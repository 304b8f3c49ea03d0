package credproxy_test

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/volcanic/telegram-agent/internal/credproxy"
	"github.com/volcanic/telegram-agent/internal/logtest"
)

// ghBinding binds realGH to the GitHub hosts the tests use.
func ghCreds() []credproxy.Credential {
	return []credproxy.Credential{
		{Binding: credproxy.Binding{Variable: "GH_TOKEN", Hosts: []string{"api.github.com", "github.com"}}, Value: realGH},
		{Binding: credproxy.Binding{Variable: "NPM_TOKEN", Hosts: []string{"registry.npmjs.org"}}, Value: realNPM},
	}
}

// fixture is a proxy with the GitHub and npm bindings, a fake upstream for
// the bound hosts and one for an unbound host.
type fixture struct {
	pki     *testPKI
	bound   *upstream
	other   *upstream
	proxy   *credproxy.Proxy
	log     *logtest.Recorder
	standIn string
	c       *http.Client
}

func newFixture(t *testing.T, cfg credproxy.Config) *fixture {
	t.Helper()
	f := &fixture{pki: newTestPKI(t)}
	f.bound = newUpstream(t, f.pki, nil, "api.github.com", "github.com", "registry.npmjs.org")
	f.other = newUpstream(t, f.pki, nil, "elsewhere.example.net")
	dns := fakeDNS{"api.github.com": f.bound.addr(), "github.com": f.bound.addr(), "registry.npmjs.org": f.bound.addr(), "elsewhere.example.net": f.other.addr()}
	if cfg.Credentials == nil {
		cfg.Credentials = ghCreds()
	}
	// The fakes are on loopback: the operator names them.
	cfg.Named = append(cfg.Named, "api.github.com", "github.com", "registry.npmjs.org", "elsewhere.example.net")
	f.proxy, f.log = startProxy(t, cfg, f.pki, dns)
	f.standIn = f.proxy.StandIns()["GH_TOKEN"]
	f.c = client(t, f.proxy)
	f.c.Transport.(*http.Transport).TLSClientConfig.RootCAs.AddCert(f.pki.cert)
	return f
}

// do sends a request and returns the status and body.
func (f *fixture) do(t *testing.T, method, rawURL, body string, header http.Header) (int, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, rawURL, r)
	if err != nil {
		t.Fatal(err)
	}
	for k, vs := range header {
		req.Header[k] = vs
	}
	resp, err := f.c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, rawURL, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(b)
}

func TestAuthorizationSwapped(t *testing.T) {
	f := newFixture(t, credproxy.Config{})
	basic := func(user, pass string) string {
		return "Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pass))
	}
	tests := []struct {
		name, auth, want string
	}{
		{"bearer", "Bearer " + f.standIn, "Bearer " + realGH},
		{"token", "token " + f.standIn, "token " + realGH},
		{"bare", f.standIn, realGH},
		{"basic password, as git sends it", basic("x-access-token", f.standIn), basic("x-access-token", realGH)},
		{"basic user", basic(f.standIn, "x-oauth-basic"), basic(realGH, "x-oauth-basic")},
		{"another credential is left alone", "Bearer someone-elses-token", "Bearer someone-elses-token"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(f.bound.requests())
			status, _ := f.do(t, "GET", "https://api.github.com/user?page=2", "", http.Header{"Authorization": {tt.auth}})
			if status != 200 {
				t.Fatalf("status %d, want 200", status)
			}
			got := f.bound.requests()[n]
			if got.Authorization != tt.want {
				t.Errorf("the upstream got the wrong Authorization header (%d bytes, want %d; holds the real token: %v)", len(got.Authorization), len(tt.want), leaks(got.Authorization, realGH))
			}
		})
	}
	lines := f.log.Find(logtest.Is(-0, "credential used"))
	if len(lines) == 0 {
		t.Fatal("no Info line for the requests a credential went into")
	}
	want := map[string]string{"variable": "GH_TOKEN", "method": "GET", "host": "api.github.com", "path": "/user", "status": "200"}
	for k, v := range want {
		if lines[0].Attrs[k] != v {
			t.Errorf("the log line's %s is %q, want %q", k, lines[0].Attrs[k], v)
		}
	}
	if leaks(f.log.Text(), realGH) || leaks(f.log.Text(), f.standIn) || strings.Contains(f.log.Text(), "page=2") {
		t.Error("the log holds a value or the query")
	}
}

func TestStandInElsewhereRefused(t *testing.T) {
	f := newFixture(t, credproxy.Config{})
	s := f.standIn
	npm := f.proxy.StandIns()["NPM_TOKEN"]
	tests := []struct {
		name, method, url, body string
		header                  http.Header
		reason                  string
	}{
		{"query", "GET", "https://api.github.com/user?access_token=" + s, "", nil, "in its URL"},
		{"query, escaped", "GET", "https://api.github.com/user?access_token=" + url.QueryEscape(s), "", nil, "in its URL"},
		{"path", "GET", "https://api.github.com/" + s + "/x", "", nil, "in its URL"},
		{"body", "POST", "https://api.github.com/gists", `{"files":{"a":{"content":"` + s + `"}}}`, nil, "in its body"},
		{"another header", "GET", "https://api.github.com/user", "", http.Header{"X-Token": {s}}, "in its X-Token header"},
		{"another credential's host", "GET", "https://api.github.com/user", "", http.Header{"Authorization": {"Bearer " + npm}}, "NPM_TOKEN is not for api.github.com"},
		{"an Authorization form not swapped", "GET", "https://api.github.com/user", "", http.Header{"Authorization": {"Custom x=" + s}}, "in a form the proxy does not replace"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := len(f.bound.requests())
			status, body := f.do(t, tt.method, tt.url, tt.body, tt.header)
			if status != http.StatusForbidden || !strings.Contains(body, tt.reason) {
				t.Errorf("got %d %q, want 403 with %q", status, body, tt.reason)
			}
			if len(f.bound.requests()) != n {
				t.Error("the refused request reached the upstream")
			}
			if leaks(body, realGH) || leaks(body, realNPM) {
				t.Error("the refusal holds a real value")
			}
		})
	}
}

func TestStreamedBodyCutOff(t *testing.T) {
	f := newFixture(t, credproxy.Config{})
	pr, pw := io.Pipe()
	go func() {
		pw.Write([]byte(strings.Repeat("x", 3<<20)))
		pw.Write([]byte(f.standIn[:10]))
		pw.Write([]byte(f.standIn[10:]))
		pw.Write([]byte("rest"))
		pw.Close()
	}()
	req, _ := http.NewRequest("POST", "https://api.github.com/upload", pr)
	resp, err := f.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(b), "in its body") {
		t.Errorf("got %d %q, want 403, the stand-in in the body", resp.StatusCode, b)
	}
	for _, r := range f.bound.requests() {
		if strings.Contains(r.Body, "rest") {
			t.Error("the body went on past the stand-in")
		}
	}
}

func TestAnswersRedacted(t *testing.T) {
	f := newFixture(t, credproxy.Config{})
	status, body := f.do(t, "GET", "https://api.github.com/echo", "", http.Header{"Authorization": {"token " + f.standIn}})
	if status != 200 {
		t.Fatalf("status %d", status)
	}
	if leaks(body, realGH) {
		t.Fatal("the real token came back to the agent")
	}
	// The agent sees back what it sent.
	if want := "you sent: token " + f.standIn; body != want {
		t.Errorf("body %q, want %q", body, want)
	}
}

func TestUnboundHostGetsTheStandIn(t *testing.T) {
	f := newFixture(t, credproxy.Config{})
	status, _ := f.do(t, "POST", "https://elsewhere.example.net/steal?t="+f.standIn, f.standIn, http.Header{"Authorization": {"Bearer " + f.standIn}})
	if status != 200 {
		t.Fatalf("status %d, want 200 (a plain tunnel)", status)
	}
	got := f.other.requests()
	if len(got) != 1 {
		t.Fatalf("%d requests at the unbound host, want 1", len(got))
	}
	if got[0].Authorization != "Bearer "+f.standIn || got[0].Body != f.standIn {
		t.Error("the unbound host did not get the stand-in as sent")
	}
	if leaks(got[0].Authorization+got[0].Body+got[0].RawQuery, realGH) {
		t.Fatal("the real token reached an unbound host")
	}
}

func TestPlainHTTPToBoundHostRefused(t *testing.T) {
	f := newFixture(t, credproxy.Config{})
	status, body := f.do(t, "GET", "http://api.github.com/user", "", http.Header{"Authorization": {"token " + f.standIn}})
	if status != http.StatusForbidden || !strings.Contains(body, "use https://api.github.com") {
		t.Errorf("got %d %q, want 403 saying to use https", status, body)
	}
}

func TestMisdirectedHostRefused(t *testing.T) {
	f := newFixture(t, credproxy.Config{})
	req, _ := http.NewRequest("GET", "https://api.github.com/user", nil)
	req.Host = "elsewhere.example.net"
	req.Header.Set("Authorization", "token "+f.standIn)
	resp, err := f.c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("status %d, want 421: a Host header other than the tunnel's could front the token to another site", resp.StatusCode)
	}
	if len(f.bound.requests()) != 0 {
		t.Error("the request reached the upstream")
	}
}

func TestEgress(t *testing.T) {
	pki := newTestPKI(t)
	up := newUpstream(t, pki, nil, "api.github.com", "listed.example.org", "elsewhere.example.net")
	dns := fakeDNS{"api.github.com": up.addr(), "listed.example.org": up.addr(), "elsewhere.example.net": up.addr(),
		"metadata.example.net": netip.MustParseAddrPort("169.254.169.254:80")}
	tests := []struct {
		name   string
		cfg    credproxy.Config
		url    string
		status int
		reason string
	}{
		{"open: any host", credproxy.Config{Named: []string{"elsewhere.example.net"}}, "https://elsewhere.example.net/", 200, ""},
		{"open: internal address refused", credproxy.Config{}, "https://elsewhere.example.net/", 403, "an internal address"},
		{"open: metadata refused", credproxy.Config{}, "http://metadata.example.net/latest/meta-data/", 403, "169.254.169.254, an internal address"},
		{"open: metadata literal refused", credproxy.Config{}, "http://169.254.169.254/latest/meta-data/", 403, "an internal address"},
		{"allowlist: bound host", credproxy.Config{Egress: credproxy.Allowlist}, "https://api.github.com/", 200, ""},
		{"allowlist: listed host", credproxy.Config{Egress: credproxy.Allowlist, Allow: []string{"*.example.org"}}, "https://listed.example.org/", 200, ""},
		{"allowlist: other host refused", credproxy.Config{Egress: credproxy.Allowlist, Named: []string{"elsewhere.example.net"}}, "https://elsewhere.example.net/", 403, "AGENT_EGRESS=allowlist: elsewhere.example.net is neither a bound host"},
		{"allowlist: plain HTTP refused", credproxy.Config{Egress: credproxy.Allowlist}, "http://elsewhere.example.net/", 403, "AGENT_EGRESS=allowlist"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := tt.cfg
			cfg.Credentials = []credproxy.Credential{{Binding: credproxy.Binding{Variable: "GH_TOKEN", Hosts: []string{"api.github.com"}}, Value: realGH}}
			cfg.Named = append(cfg.Named, "api.github.com", "listed.example.org")
			p, _ := startProxy(t, cfg, pki, dns)
			c := client(t, p)
			c.Transport.(*http.Transport).TLSClientConfig.RootCAs.AddCert(pki.cert)
			resp, err := c.Get(tt.url)
			if tt.status == 200 {
				if err != nil {
					t.Fatal(err)
				}
				resp.Body.Close()
				if resp.StatusCode != 200 {
					t.Fatalf("status %d", resp.StatusCode)
				}
				return
			}
			var got string
			var status int
			if err != nil {
				// A refused CONNECT: Go's client reports the status;
				// the reason is in the header, which it drops, so ask
				// the proxy the way curl -v would.
				got, status = connectRefusal(t, p, tt.url)
			} else {
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				got, status = string(b), resp.StatusCode
			}
			if status != tt.status || !strings.Contains(got, tt.reason) {
				t.Errorf("got %d %q, want %d with %q", status, got, tt.status, tt.reason)
			}
		})
	}
}

// connectRefusal sends CONNECT for rawURL's host to p by hand and
// returns the refusal's body and status.
func connectRefusal(t *testing.T, p *credproxy.Proxy, rawURL string) (string, int) {
	t.Helper()
	u, _ := url.Parse(rawURL)
	host := u.Host
	if u.Port() == "" {
		host += ":443"
	}
	req, _ := http.NewRequest("CONNECT", p.URL(), nil)
	req.Host = host
	req.URL.Opaque = host
	resp, err := http.DefaultTransport.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if h := resp.Header.Get("X-Credential-Proxy-Refused"); !strings.Contains(string(b), h) {
		t.Errorf("the refusal's header and body differ")
	}
	return string(b), resp.StatusCode
}

func TestProxyAnswersItself(t *testing.T) {
	f := newFixture(t, credproxy.Config{})
	resp, err := http.Get(f.proxy.URL() + "/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if diff := cmp.Diff("telegram-agent credential proxy\n", string(b)); diff != "" {
		t.Error(diff)
	}
	e := f.proxy.Enforcement()
	if e.Addr != f.proxy.Addr() || e.Port == 0 || e.Allowlist || !strings.HasPrefix(e.Addr, "127.0.0.1:") {
		t.Errorf("Enforcement() = %+v", e)
	}
}

// TestBoundAnswers covers the forms of answer a bound host gives: chunked
// and streamed (each event reaches the agent before the next is sent),
// without a body (HEAD), after the host closed an idle connection, and
// to a body sent after Expect: 100-continue.
func TestBoundAnswers(t *testing.T) {
	pki := newTestPKI(t)
	var large []byte
	for i := 0; len(large) < 3<<20; i++ {
		large = fmt.Appendf(large, "%08d ", i)
		if i%5000 == 17 {
			large = append(large, realGH...)
		}
	}
	next := make(chan struct{})
	up := newUpstreamWith(t, pki, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/stream":
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: one, the token is "+realGH+"\n\n")
			w.(http.Flusher).Flush()
			<-next
			io.WriteString(w, "data: two\n\n")
		case "/large":
			// Distinct bytes in pieces, flushed, with the real token
			// here and there: the answer must come whole, in order,
			// the token replaced.
			if r.URL.Query().Get("chunked") == "" {
				w.Header().Set("Content-Length", strconv.Itoa(len(large)))
			}
			for rest := large; len(rest) > 0; {
				n := min(len(rest), 7000+len(rest)%9000)
				w.Write(rest[:n])
				w.(http.Flusher).Flush()
				rest = rest[n:]
			}
		case "/head":
			w.Header().Set("Content-Length", "1234")
		case "/upload":
			b, _ := io.ReadAll(r.Body)
			io.WriteString(w, "got "+strconv.Itoa(len(b)))
		default:
			io.WriteString(w, "ok")
		}
	}), func(s *http.Server) { s.IdleTimeout = 50 * time.Millisecond }, "api.github.com")
	p, _ := startProxy(t, credproxy.Config{Credentials: ghCreds(), Named: []string{"api.github.com"}}, pki, fakeDNS{"api.github.com": up.addr()})
	c := client(t, p)
	c.Transport.(*http.Transport).TLSClientConfig.RootCAs.AddCert(pki.cert)
	c.Transport.(*http.Transport).ExpectContinueTimeout = 10 * time.Second
	standIn := p.StandIns()["GH_TOKEN"]
	auth := func(req *http.Request) *http.Request { req.Header.Set("Authorization", "token "+standIn); return req }

	t.Run("streamed", func(t *testing.T) {
		req, _ := http.NewRequest("GET", "https://api.github.com/stream", nil)
		resp, err := c.Do(auth(req))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		br := bufio.NewReader(resp.Body)
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if leaks(line, realGH) || !strings.Contains(line, standIn) {
			t.Errorf("the first event holds the real token, or not the stand-in in its place")
		}
		close(next)
		rest, _ := io.ReadAll(br)
		if !strings.Contains(string(rest), "data: two") {
			t.Errorf("the second event is missing: %q", rest)
		}
	})
	t.Run("large, in pieces", func(t *testing.T) {
		for _, query := range []string{"", "?chunked=1"} {
			req, _ := http.NewRequest("GET", "https://api.github.com/large"+query, nil)
			resp, err := c.Do(auth(req))
			if err != nil {
				t.Fatal(err)
			}
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := bytes.ReplaceAll(large, []byte(realGH), []byte(standIn))
			if err != nil || !bytes.Equal(b, want) {
				t.Fatalf("%q: a %d-byte answer came out as %d bytes, equal: %v (%v)", query, len(want), len(b), bytes.Equal(b, want), err)
			}
		}
	})
	t.Run("HEAD", func(t *testing.T) {
		req, _ := http.NewRequest("HEAD", "https://api.github.com/head", nil)
		resp, err := c.Do(auth(req))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.ContentLength != 1234 {
			t.Errorf("HEAD: %d, length %d; want 200, 1234", resp.StatusCode, resp.ContentLength)
		}
	})
	t.Run("after the host closed the idle connection", func(t *testing.T) {
		for range 3 {
			req, _ := http.NewRequest("GET", "https://api.github.com/x", nil)
			resp, err := c.Do(auth(req))
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "ok" {
				t.Fatalf("got %d %q", resp.StatusCode, b)
			}
			time.Sleep(200 * time.Millisecond)
		}
	})
	t.Run("Expect: 100-continue", func(t *testing.T) {
		body := strings.Repeat("x", 2<<20)
		req, _ := http.NewRequest("POST", "https://api.github.com/upload", strings.NewReader(body))
		req.Header.Set("Expect", "100-continue")
		start := time.Now()
		resp, err := c.Do(auth(req))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != "got "+strconv.Itoa(len(body)) {
			t.Fatalf("got %d %q", resp.StatusCode, b)
		}
		if time.Since(start) > 5*time.Second {
			t.Error("the client waited for its Expect timeout: the proxy did not answer 100 Continue")
		}
	})
}

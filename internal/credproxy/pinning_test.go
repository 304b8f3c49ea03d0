package credproxy_test

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestPinnedClientRefusal runs clients that will not take the proxy's
// certificate for a bound host through the real proxy: curl pinning
// another key, and a Go client trusting only its own roots. Each fails,
// and the proxy's notices after the mark taken before it say, in one
// line, that a client refused the certificate for that host and what to
// do; a client that takes the certificate leaves no notice.
func TestPinnedClientRefusal(t *testing.T) {
	a := newAgent(t)
	p := a.f.proxy
	otherKey := sha256.Sum256(a.f.pki.cert.RawSubjectPublicKeyInfo)
	pin := "sha256//" + base64.StdEncoding.EncodeToString(otherKey[:])
	proxyURL, _ := url.Parse(p.URL())
	tests := []struct {
		name    string
		run     func(t *testing.T) error
		refused bool
	}{
		{"curl taking the bundle", func(t *testing.T) error {
			need(t, "curl")
			_, err := a.run(t, `curl -sS -f -H "Authorization: Bearer $GH_TOKEN" https://api.github.com/user`)
			return err
		}, false},
		{"curl --pinnedpubkey", func(t *testing.T) error {
			need(t, "curl")
			_, err := a.run(t, `curl -sS -f --pinnedpubkey '`+pin+`' -H "Authorization: Bearer $GH_TOKEN" https://api.github.com/user`)
			return err
		}, true},
		{"Go with its own roots", func(t *testing.T) error {
			c := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
				Proxy:           http.ProxyURL(proxyURL),
				TLSClientConfig: &tls.Config{RootCAs: a.f.pki.pool}, // not the proxy's CA
			}}
			resp, err := c.Get("https://api.github.com/user")
			if err == nil {
				resp.Body.Close()
			}
			return err
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mark := p.Mark()
			err := tt.run(t)
			if tt.refused != (err != nil) {
				t.Fatalf("the client's error is %v; want one: %v", err, tt.refused)
			}
			var notes []string
			for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				// The proxy sees the refusal as the client goes: a
				// moment after the client's own error.
				if notes = p.Since(mark); len(notes) > 0 || !tt.refused || time.Now().After(deadline) {
					break
				}
			}
			if !tt.refused {
				if len(notes) != 0 {
					t.Fatalf("a client that took the certificate left notices: %q", notes)
				}
				return
			}
			if len(notes) != 1 || !strings.Contains(notes[0], "refused the proxy's certificate for api.github.com") || !strings.Contains(notes[0], "SSL_CERT_FILE") || !strings.Contains(notes[0], "pins") {
				t.Fatalf("notices after a refusal: %q", notes)
			}
			if len(p.Since(p.Mark())) != 0 {
				t.Error("a mark taken after the refusal still sees it")
			}
			if !strings.Contains(a.f.log.Text(), "refused the proxy's certificate") {
				t.Error("the operator's log has no line for the refusal")
			}
		})
	}
}

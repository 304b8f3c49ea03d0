package credproxy

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// CAVariables are the variables that point a client at the CA bundle,
// each with what reads it.
var CAVariables = []struct{ Name, Reader string }{
	{"SSL_CERT_FILE", "OpenSSL (curl, wget, Python's ssl, urllib and httpx, Ruby), Go (gh), uv"},
	{"NODE_EXTRA_CA_CERTS", "Node.js, added to its own roots"},
	{"REQUESTS_CA_BUNDLE", "Python requests"},
	{"CURL_CA_BUNDLE", "curl"},
	{"GIT_SSL_CAINFO", "git over HTTPS"},
	{"PIP_CERT", "pip"},
	{"NPM_CONFIG_CAFILE", "npm"},
	{"AWS_CA_BUNDLE", "the AWS CLI and SDKs"},
	{"CARGO_HTTP_CAINFO", "cargo"},
	{"DENO_CERT", "Deno"},
}

// noProxy is NO_PROXY: loopback only, so a bound host always goes through
// the proxy.
const noProxy = "localhost,127.0.0.1,::1"

// AgentEnv returns the variables every agent process gets so that its
// clients go through the proxy and trust its CA: HTTPS_PROXY and
// HTTP_PROXY in both cases, NO_PROXY for loopback (never a bound host),
// NODE_USE_ENV_PROXY=1 (Node 24's fetch and https), and each of
// CAVariables set to bundle, the path of the bundle [Proxy.WriteBundle]
// wrote.
func (p *Proxy) AgentEnv(bundle string) map[string]string {
	env := map[string]string{
		"HTTPS_PROXY": p.URL(), "https_proxy": p.URL(),
		"HTTP_PROXY": p.URL(), "http_proxy": p.URL(),
		"NO_PROXY": noProxy, "no_proxy": noProxy,
		"NODE_USE_ENV_PROXY": "1",
	}
	for _, v := range CAVariables {
		env[v.Name] = bundle
	}
	return env
}

// systemBundles are where Linux distributions keep their roots, as Go's
// crypto/x509 looks for them.
var systemBundles = []string{
	"/etc/ssl/certs/ca-certificates.crt",
	"/etc/pki/tls/certs/ca-bundle.crt",
	"/etc/ssl/ca-bundle.pem",
	"/etc/pki/tls/cacert.pem",
	"/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
	"/etc/ssl/cert.pem",
}

// SystemRoots returns the system's root certificates, PEM-encoded: the
// file sslCertFile names (the bot's own SSL_CERT_FILE) when set, else the
// first of the distributions' places that exists. No roots is an error:
// agent processes would trust nothing but the proxy's CA.
func SystemRoots(sslCertFile string) ([]byte, error) {
	places := systemBundles
	if sslCertFile != "" {
		places = []string{sslCertFile}
	}
	for _, f := range places {
		b, err := os.ReadFile(f)
		if err == nil && bytes.Contains(b, []byte("-----BEGIN CERTIFICATE-----")) {
			return b, nil
		}
	}
	return nil, fmt.Errorf("credproxy: no system root certificates in %s", strings.Join(places, ", "))
}

// WriteBundle writes the agent's CA bundle to path: roots (the system's,
// from [SystemRoots]) and the proxy's CA certificate, public material
// only; its successor once published and, after a renewal, the CA it
// replaced while it lasts. The file
// is replaced whole (a temporary file renamed), readable by everyone and
// writable by the bot's user alone, in a directory made if missing (mode
// 0755). The proxy writes it there again when it renews its CA.
func (p *Proxy) WriteBundle(path string, roots []byte) error {
	if p.authority() == nil {
		return errors.New("credproxy: nothing is bound, so there is no CA to bundle")
	}
	p.caMu.Lock()
	defer p.caMu.Unlock()
	p.bundle, p.roots = path, roots
	return p.writeBundleLocked()
}

// writeBundleLocked writes the bundle; caMu is held.
func (p *Proxy) writeBundleLocked() error {
	path, roots := p.bundle, p.roots
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("credproxy: make the bundle's directory: %w", err)
	}
	var b bytes.Buffer
	b.Write(roots)
	if len(roots) > 0 && roots[len(roots)-1] != '\n' {
		b.WriteByte('\n')
	}
	for _, ca := range []*authority{p.ca, p.next, p.prevCA} {
		if ca == nil || !p.now().Before(ca.cert.NotAfter) {
			continue
		}
		b.WriteString("# telegram-agent credential proxy CA, SHA-256 " + ca.fingerprint() + "\n")
		b.Write(ca.PEM())
	}
	f, err := os.CreateTemp(dir, ".bundle-*")
	if err != nil {
		return fmt.Errorf("credproxy: write the CA bundle: %w", err)
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b.Bytes()); err != nil {
		f.Close()
		return fmt.Errorf("credproxy: write the CA bundle: %w", err)
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return fmt.Errorf("credproxy: write the CA bundle: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("credproxy: write the CA bundle: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("credproxy: write the CA bundle: %w", err)
	}
	if err := os.Rename(f.Name(), path); err != nil {
		return fmt.Errorf("credproxy: write the CA bundle: %w", err)
	}
	return nil
}

// Shape describes a stand-in for the operator, without its value: its
// prefix, its length and the kinds of characters it has, as
// "ghp_… 40 characters: letters, digits".
func Shape(s string) string {
	prefix := tokenPrefix(s)
	var kinds []string
	seen := map[string]bool{}
	for i := len(prefix); i < len(s); i++ {
		c := s[i]
		k := "symbols"
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z':
			k = "letters"
		case c >= '0' && c <= '9':
			k = "digits"
		}
		if !seen[k] {
			seen[k] = true
			kinds = append(kinds, k)
		}
	}
	if prefix == "" {
		return fmt.Sprintf("%d characters: %s", len(s), strings.Join(kinds, ", "))
	}
	return fmt.Sprintf("%s… %d characters: %s", prefix, len(s), strings.Join(kinds, ", "))
}

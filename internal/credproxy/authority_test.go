package credproxy_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"log/slog"
	"math/big"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/credproxy"
	"github.com/volcanic/telegram-agent/internal/logtest"
)

// signWithCA signs a leaf for name with the proxy's CA key directly, as
// anyone holding the key could: what the name constraints must stop.
func signWithCA(t *testing.T, p *credproxy.Proxy, name string) []byte {
	t.Helper()
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: name}, DNSNames: []string{name},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.CACert(), &key.PublicKey, p.CAKey())
	if err != nil {
		t.Fatal(err)
	}
	return pemCert(mustParse(t, der))
}

func mustParse(t *testing.T, der []byte) *x509.Certificate {
	t.Helper()
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestCANameConstrained(t *testing.T) {
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl is not installed (apt-get install openssl)")
	}
	creds := []credproxy.Credential{{Binding: credproxy.Binding{Variable: "GH_TOKEN", Hosts: []string{"api.github.com", "*.example.org"}}, Value: realGH}}
	p, _ := startProxy(t, credproxy.Config{Credentials: creds}, newTestPKI(t), fakeDNS{})
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.pem")
	os.WriteFile(caFile, p.CAPEM(), 0o644)

	ca := p.CACert()
	if !ca.IsCA || !ca.PermittedDNSDomainsCritical || ca.NotAfter.Sub(ca.NotBefore) > credproxy.DefaultCALifetime+time.Hour {
		t.Errorf("the CA is not a critical, name-constrained, short-lived CA: %v %v %v", ca.IsCA, ca.PermittedDNSDomainsCritical, ca.NotAfter.Sub(ca.NotBefore))
	}
	if _, ok := ca.PublicKey.(*ecdsa.PublicKey); !ok {
		t.Error("the CA's key is not ECDSA")
	}

	tests := []struct {
		name string
		ok   bool
	}{
		{"api.github.com", true},
		{"deep.example.org", true},
		{"example.org", false},
		{"evil.com", false},
		{"api.github.com.evil.com", false},
		{"github.com", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			leaf := filepath.Join(dir, tt.name+".pem")
			os.WriteFile(leaf, signWithCA(t, p, tt.name), 0o644)
			out, err := exec.Command(openssl, "verify", "-CAfile", caFile, "-purpose", "sslserver", leaf).CombinedOutput()
			if ok := err == nil; ok != tt.ok {
				t.Errorf("openssl verify of a leaf for %s: ok=%v, want %v: %s", tt.name, ok, tt.ok, out)
			}
			if !tt.ok && !strings.Contains(string(out), "subtree") {
				t.Errorf("openssl refused for another reason than the name constraints: %s", out)
			}
			if _, err := p.Leaf(tt.name); (err == nil) != tt.ok {
				t.Errorf("the proxy's own leaf for %s: %v, want ok=%v", tt.name, err, tt.ok)
			}
		})
	}
	// No address may be signed for either.
	key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(8), Subject: pkix.Name{CommonName: "127.0.0.1"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.CACert(), &key.PublicKey, p.CAKey())
	if err != nil {
		t.Fatal(err)
	}
	leaf := filepath.Join(dir, "ip.pem")
	os.WriteFile(leaf, pemCert(mustParse(t, der)), 0o644)
	if out, err := exec.Command(openssl, "verify", "-CAfile", caFile, "-purpose", "sslserver", leaf).CombinedOutput(); err == nil {
		t.Errorf("openssl accepts a leaf for 127.0.0.1 signed by the CA: %s", out)
	}
}

func TestBundleHoldsNoKey(t *testing.T) {
	creds := []credproxy.Credential{{Binding: credproxy.Binding{Variable: "GH_TOKEN", Hosts: []string{"api.github.com"}}, Value: realGH}}
	pki := newTestPKI(t)
	p, _ := startProxy(t, credproxy.Config{Credentials: creds}, pki, fakeDNS{})
	path := writeBundle(t, p, pki)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o644 {
		t.Errorf("the bundle's mode is %v, want 0644", info.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	if !bytes.Contains(b, p.CAPEM()) || !bytes.Contains(b, pemCert(pki.cert)) {
		t.Fatal("the bundle lacks the roots or the proxy's CA")
	}
	d, _ := p.CAKey().Bytes()
	der, _ := x509.MarshalECPrivateKey(p.CAKey())
	pk8, _ := x509.MarshalPKCS8PrivateKey(p.CAKey())
	// Everything the proxy wrote: the bundle and its directory.
	filepath.WalkDir(filepath.Dir(path), func(f string, e os.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		c, _ := os.ReadFile(f)
		for _, form := range [][]byte{d, der, pk8, []byte(hex.EncodeToString(d)), []byte(base64.StdEncoding.EncodeToString(der)), []byte(base64.StdEncoding.EncodeToString(pk8)), []byte("PRIVATE KEY")} {
			if bytes.Contains(c, form) {
				t.Errorf("%s holds the CA's private key", f)
			}
		}
		return nil
	})
}

func TestCARenewedHalfWay(t *testing.T) {
	var now atomic.Int64
	start := time.Now()
	now.Store(start.UnixNano())
	clock := func() time.Time { return time.Unix(0, now.Load()) }
	creds := []credproxy.Credential{{Binding: credproxy.Binding{Variable: "GH_TOKEN", Hosts: []string{"api.github.com"}}, Value: realGH}}
	pki := newTestPKI(t)
	rec := logtest.New()
	p, err := credproxy.Start(credproxy.Config{Credentials: creds, CALifetime: 10 * time.Hour, Logger: rec.Logger()},
		credproxy.WithRoots(pki.pool), credproxy.WithResolver(fakeDNS{}.resolve), credproxy.WithNow(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	path := writeBundle(t, p, pki)
	first := p.CACert()

	now.Store(start.Add(4 * time.Hour).UnixNano())
	p.CACert()
	if b, _ := os.ReadFile(path); bytes.Count(b, []byte("BEGIN CERTIFICATE")) != 2 {
		t.Fatal("a successor was published before half the CA's life")
	}
	// Half way: the successor is in the bundle, the CA still signs.
	now.Store(start.Add(6 * time.Hour).UnixNano())
	leaf, err := p.Leaf("api.github.com")
	if err != nil {
		t.Fatal(err)
	}
	if err := leaf.CheckSignatureFrom(first); err != nil || !p.CACert().Equal(first) {
		t.Fatal("the CA stopped signing before it expires")
	}
	b, _ := os.ReadFile(path)
	if bytes.Count(b, []byte("BEGIN CERTIFICATE")) != 3 || !bytes.Contains(b, pemCert(first)) {
		t.Fatal("the bundle lacks the successor or the CA")
	}
	// An hour before it expires, the successor signs.
	now.Store(start.Add(9*time.Hour + 30*time.Minute).UnixNano())
	leaf, err = p.Leaf("api.github.com")
	if err != nil {
		t.Fatal(err)
	}
	second := p.CACert()
	if second.Equal(first) || leaf.CheckSignatureFrom(second) != nil {
		t.Fatal("the successor does not sign an hour before the CA expires")
	}
	if b, _ := os.ReadFile(path); !bytes.Contains(b, pemCert(second)) || !bytes.Contains(b, pemCert(first)) {
		t.Error("the bundle lacks the new CA, or the old one before it expires")
	}
	if len(rec.Find(logtest.Is(slog.LevelInfo, "CA renewed"))) != 1 {
		t.Error("no Info line for the renewal")
	}
	// The old one expired: the next successor comes, the old one goes.
	now.Store(start.Add(12 * time.Hour).UnixNano())
	p.CACert()
	b, _ = os.ReadFile(path)
	if bytes.Contains(b, pemCert(first)) || !bytes.Contains(b, pemCert(second)) || bytes.Count(b, []byte("BEGIN CERTIFICATE")) != 3 {
		t.Error("after the old CA expired the bundle should hold the roots, the CA and its successor")
	}
}

package credproxy

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strings"
	"sync"
	"time"
)

// DefaultCALifetime is how long the certificate authority made at start
// is valid: a restart makes a new one, and a stolen bundle is worth
// nothing without the key, which never leaves the bot's memory.
const DefaultCALifetime = 30 * 24 * time.Hour

// leafLifetime is how long a leaf certificate is valid, at most; a leaf
// is made again when its time is up.
const leafLifetime = 24 * time.Hour

// clockSkew is how far before now certificates start, for clients whose
// clocks run behind.
const clockSkew = 5 * time.Minute

// authority is the certificate authority made at start: an ECDSA P-256
// key that is never written anywhere, a certificate name-constrained to
// the bound hosts, and the leaves it signed, one per host name asked.
type authority struct {
	cert    *x509.Certificate
	key     *ecdsa.PrivateKey
	leafKey *ecdsa.PrivateKey
	hosts   []string
	now     func() time.Time

	mu     sync.Mutex
	leaves map[string]*tls.Certificate
}

// newAuthority makes a certificate authority for hosts (from parseHost:
// names and "*.domain" globs), valid for lifetime from now.
func newAuthority(hosts []string, lifetime time.Duration, now func() time.Time) (*authority, error) {
	if len(hosts) == 0 {
		return nil, errors.New("credproxy: a certificate authority needs at least one bound host")
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("credproxy: make the CA key: %w", err)
	}
	leafKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, fmt.Errorf("credproxy: make the leaf key: %w", err)
	}
	var permitted []string
	for _, h := range hosts {
		// A constraint with a leading dot permits the names below it
		// alone, as the glob does; one without permits the name (and,
		// in the RFC's reading, names below it, which no leaf gets).
		c := strings.TrimPrefix(h, "*")
		if !slices.Contains(permitted, c) {
			permitted = append(permitted, c)
		}
	}
	t := now()
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber:                serial,
		Subject:                     pkix.Name{CommonName: "telegram-agent credential proxy CA " + t.UTC().Format("2006-01-02T15:04Z"), Organization: []string{"telegram-agent"}},
		NotBefore:                   t.Add(-clockSkew),
		NotAfter:                    t.Add(lifetime),
		KeyUsage:                    x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
		BasicConstraintsValid:       true,
		IsCA:                        true,
		MaxPathLen:                  0,
		MaxPathLenZero:              true,
		PermittedDNSDomainsCritical: true,
		PermittedDNSDomains:         permitted,
		// No IP address may be signed for: an empty range list in
		// the excluded set would be ignored, so exclude them all.
		ExcludedIPRanges: []*netIPNet{allIPv4(), allIPv6()},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, fmt.Errorf("credproxy: sign the CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("credproxy: read the CA certificate back: %w", err)
	}
	return &authority{cert: cert, key: key, leafKey: leafKey, hosts: slices.Clone(hosts), now: now, leaves: map[string]*tls.Certificate{}}, nil
}

// randomSerial returns a random 128-bit serial number.
func randomSerial() (*big.Int, error) {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("credproxy: draw a serial number: %w", err)
	}
	return n.Add(n, big.NewInt(1)), nil
}

// PEM returns the CA certificate, PEM-encoded: public material, for the
// agent's CA bundle.
func (a *authority) PEM() []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: a.cert.Raw})
}

// fingerprint returns the SHA-256 of the CA certificate, as openssl's
// -fingerprint prints it.
func (a *authority) fingerprint() string {
	sum := sha256.Sum256(a.cert.Raw)
	h := strings.ToUpper(hex.EncodeToString(sum[:]))
	var b strings.Builder
	for i := 0; i < len(h); i += 2 {
		if i > 0 {
			b.WriteByte(':')
		}
		b.WriteString(h[i : i+2])
	}
	return b.String()
}

// leaf returns a certificate for name signed by the CA, made on first use
// and again when its time is up. A name no bound host matches is refused:
// the CA's name constraints would make clients refuse it anyway.
func (a *authority) leaf(name string) (*tls.Certificate, error) {
	name = normalHost(name)
	if !matchAny(a.hosts, name) {
		return nil, fmt.Errorf("credproxy: %s is not a bound host", name)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	if c, ok := a.leaves[name]; ok && now.Before(c.Leaf.NotAfter.Add(-time.Hour)) {
		return c, nil
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, err
	}
	notAfter := now.Add(leafLifetime)
	if notAfter.After(a.cert.NotAfter) {
		notAfter = a.cert.NotAfter
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name},
		DNSNames:     []string{name},
		NotBefore:    now.Add(-clockSkew),
		NotAfter:     notAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, a.cert, &a.leafKey.PublicKey, a.key)
	if err != nil {
		return nil, fmt.Errorf("credproxy: sign a leaf for %s: %w", name, err)
	}
	leaf, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, fmt.Errorf("credproxy: read a leaf back: %w", err)
	}
	c := &tls.Certificate{Certificate: [][]byte{der, a.cert.Raw}, PrivateKey: a.leafKey, Leaf: leaf}
	a.leaves[name] = c
	return c, nil
}

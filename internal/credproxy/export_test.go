package credproxy

import (
	"context"
	"crypto/ecdsa"
	"crypto/x509"
	"io"
	"net/netip"
	"time"
)

// WithRoots makes the proxy verify upstreams against roots, not the
// system's.
func WithRoots(roots *x509.CertPool) Option { return func(s *settings) { s.roots = roots } }

// WithResolver makes the proxy find upstream addresses with resolve, not
// the system's resolver.
func WithResolver(resolve func(ctx context.Context, host, port string) ([]netip.AddrPort, error)) Option {
	return func(s *settings) { s.resolve = resolve }
}

// WithNow makes the proxy read the time from now.
func WithNow(now func() time.Time) Option { return func(s *settings) { s.now = now } }

// CAKey returns the CA's private key, for tests that prove what it can
// sign and that nothing written holds it.
func (p *Proxy) CAKey() *ecdsa.PrivateKey { return p.authority().key }

// CACert returns the CA's certificate.
func (p *Proxy) CACert() *x509.Certificate { return p.authority().cert }

// Leaf returns the CA's leaf for name.
func (p *Proxy) Leaf(name string) (*x509.Certificate, error) {
	c, err := p.authority().leaf(name)
	if err != nil {
		return nil, err
	}
	return c.Leaf, nil
}

var (
	NewStandIn  = newStandIn
	TokenPrefix = tokenPrefix
	Internal    = internal
)

// NewReplacingBody is newReplacingBody.
func NewReplacingBody(src io.ReadCloser, replace map[string]string) io.ReadCloser {
	return newReplacingBody(src, newPatternSet(replace))
}

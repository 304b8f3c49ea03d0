package credproxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"slices"
	"sync"
	"time"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// Credential is a bound variable's real value, with its binding.
type Credential struct {
	Binding
	// Value is the real value. It leaves the proxy only in the
	// Authorization header of a request to one of the binding's hosts.
	Value string
	// StandIn is what agent processes get in its place, from
	// [DrawStandIns]; empty, [Start] draws one.
	StandIn string
}

// DrawStandIns draws a stand-in for every credential that has none, in
// place, so that a host can hand them out before the proxy starts (to
// what it expands for agent processes' use). known reports a value the
// redactor knows (nil: none); a stand-in is never one. A value shorter
// than [MinimumValueLength] is an error naming the variable.
func DrawStandIns(creds []Credential, known func(string) bool) error {
	return drawStandIns(creds, nil, known)
}

// drawStandIns is DrawStandIns with the source of randomness.
func drawStandIns(creds []Credential, random io.Reader, known func(string) bool) error {
	taken := func(v string) bool {
		if known != nil && known(v) {
			return true
		}
		return slices.ContainsFunc(creds, func(c Credential) bool { return c.StandIn == v || c.Value == v })
	}
	for i := range creds {
		c := &creds[i]
		if len(c.Value) < MinimumValueLength {
			return fmt.Errorf("credproxy: %s is shorter than %d characters: too short to redact, so it cannot be bound", c.Variable, MinimumValueLength)
		}
		if c.StandIn != "" {
			continue
		}
		s, err := newStandIn(c.Value, random, taken)
		if err != nil {
			return fmt.Errorf("credproxy: %s: %w", c.Variable, err)
		}
		c.StandIn = s
	}
	return nil
}

// Config is what the caller fills to start a [Proxy].
type Config struct {
	// Credentials are the bound variables that are set, with their real
	// values.
	Credentials []Credential
	// Egress is the egress tier; Allow the hosts AGENT_EGRESS_ALLOW
	// lists ([ParseAllow]), which the allow-list tiers reach besides the
	// bound hosts.
	Egress Egress
	Allow  []string
	// Named are the hosts the operator named (in CREDENTIAL_HOSTS and
	// AGENT_EGRESS_ALLOW): they may resolve to internal addresses, as a
	// self-hosted Gitea on the LAN does. A built-in binding names none.
	Named []string
	// Redactor knows every secret of the host, the real values among
	// them: a stand-in is never one it knows, and it redacts what bound
	// hosts send back. Nil means one that knows the real values alone.
	Redactor *redactor.Redactor
	// Logger gets one Info line per request a credential was put in,
	// and the proxy's own problems; nil discards.
	Logger *slog.Logger
	// CALifetime is how long the certificate authority is valid; zero
	// means DefaultCALifetime.
	CALifetime time.Duration
}

// Option configures what only tests change.
type Option func(*settings)

// settings are the test seams.
type settings struct {
	roots   *x509.CertPool
	resolve resolver
	random  io.Reader
	now     func() time.Time
}

// Proxy is the credential proxy: an HTTP proxy on loopback that agent
// processes reach the network through. It is safe for concurrent use.
type Proxy struct {
	creds  []Credential
	hosts  []string
	egress Egress
	allow  []string
	red    *redactor.Redactor
	logger *slog.Logger
	// answers is what every answer from a bound host is matched for:
	// each real value, replaced by its stand-in.
	answers *patternSet

	// caMu guards the CA that signs, its successor once published, the
	// one it replaced (in the bundle until it expires) and where the
	// bundle goes; see authority.
	caMu             sync.Mutex
	ca, next, prevCA *authority
	caLifetime       time.Duration
	now              func() time.Time
	bundle           string
	roots            []byte
	// upRoots verify the bound hosts' certificates; nil means the
	// system's.
	upRoots *x509.CertPool

	ln        net.Listener
	srv       *http.Server
	dialer    *upstreamDialer
	transport *http.Transport
	plain     *httputil.ReverseProxy

	// refusals are the clients that refused the proxy's certificate,
	// for Since.
	refusals certRefusals

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// MinimumValueLength is the shortest real value a binding may have: the
// redactor's, so that what a bound host sends back can be redacted.
const MinimumValueLength = redactor.MinimumSecretLength

// Start draws a stand-in for every credential that has none, makes the
// certificate authority for the bound hosts and starts the proxy on a
// loopback port. A value shorter than [MinimumValueLength] is an error
// naming the variable; so is a stand-in that cannot be drawn, or one
// given that the redactor knows.
func Start(cfg Config, opts ...Option) (*Proxy, error) {
	s := settings{resolve: systemResolver, now: time.Now}
	for _, o := range opts {
		o(&s)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	red := cfg.Redactor
	if red == nil {
		var values []string
		for _, c := range cfg.Credentials {
			values = append(values, c.Value)
		}
		red = redactor.New(values)
	}
	p := &Proxy{
		egress:  cfg.Egress,
		allow:   slices.Clone(cfg.Allow),
		red:     red,
		logger:  logger,
		conns:   map[net.Conn]struct{}{},
		upRoots: s.roots,
		now:     s.now,
		dialer:  &upstreamDialer{resolve: s.resolve, named: slices.Clone(cfg.Named), d: net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}},
	}
	creds := slices.Clone(cfg.Credentials)
	if err := drawStandIns(creds, s.random, func(v string) bool { return red.Redact(v) != v }); err != nil {
		return nil, err
	}
	for _, c := range creds {
		if red.Redact(c.StandIn) != c.StandIn || c.StandIn == c.Value || !printable(c.StandIn) {
			return nil, fmt.Errorf("credproxy: the stand-in given for %s is a known secret, its real value or not printable", c.Variable)
		}
		c.Hosts = slices.Clone(c.Hosts)
		p.creds = append(p.creds, c)
		for _, h := range c.Hosts {
			if !slices.Contains(p.hosts, h) {
				p.hosts = append(p.hosts, h)
			}
		}
	}
	p.answers = &patternSet{}
	for _, c := range p.creds {
		p.answers.add(c.Value, c.StandIn)
	}
	if len(p.hosts) > 0 {
		p.caLifetime = cfg.CALifetime
		if p.caLifetime <= 0 {
			p.caLifetime = DefaultCALifetime
		}
		ca, err := newAuthority(p.hosts, p.caLifetime, s.now)
		if err != nil {
			return nil, err
		}
		p.ca = ca
	}
	p.transport = &http.Transport{
		Proxy: nil,
		DialContext: func(ctx context.Context, _, addr string) (net.Conn, error) {
			return p.dialer.dial(ctx, addr)
		},
		TLSClientConfig:       &tls.Config{RootCAs: s.roots, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          100,
		MaxIdleConnsPerHost:   16,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   15 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	p.plain = &httputil.ReverseProxy{
		Rewrite:      func(pr *httputil.ProxyRequest) { pr.Out.Host = pr.In.Host },
		Transport:    p.transport,
		ErrorHandler: p.upstreamError,
		ErrorLog:     slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("credproxy: listen on loopback: %w", err)
	}
	p.ln = ln
	p.srv = &http.Server{
		Handler:           p,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelDebug),
	}
	p.wg.Add(1)
	go func() { defer p.wg.Done(); _ = p.srv.Serve(ln) }()
	return p, nil
}

// Serve serves the proxy on l too (a unix socket bridged into a network
// namespace, for one), until l fails or the proxy is closed.
func (p *Proxy) Serve(l net.Listener) error {
	return p.srv.Serve(l)
}

// Addr returns the address the proxy listens on, 127.0.0.1:port.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// URL returns the proxy's URL, as HTTPS_PROXY gives it.
func (p *Proxy) URL() string { return "http://" + p.Addr() }

// Enforcement returns what the sandbox launcher needs to confine agent
// processes' network to the proxy.
func (p *Proxy) Enforcement() Enforcement {
	port := 0
	if a, ok := p.ln.Addr().(*net.TCPAddr); ok {
		port = a.Port
	}
	return Enforcement{Addr: p.Addr(), Port: port, Allowlist: p.egress != Open, Required: p.egress == AllowlistRequired}
}

// Egress returns the egress tier.
func (p *Proxy) Egress() Egress { return p.egress }

// StandIns returns each bound variable's stand-in, by name: what agent
// processes get in its place.
func (p *Proxy) StandIns() map[string]string {
	out := make(map[string]string, len(p.creds))
	for _, c := range p.creds {
		out[c.Variable] = c.StandIn
	}
	return out
}

// Bindings returns the bindings in force, in the order configured.
func (p *Proxy) Bindings() []Binding {
	out := make([]Binding, 0, len(p.creds))
	for _, c := range p.creds {
		b := c.Binding
		b.Hosts = slices.Clone(b.Hosts)
		out = append(out, b)
	}
	return out
}

// CAPEM returns the certificate authority's certificate, PEM-encoded, or
// nil when nothing is bound. It is public material; the key is never
// handed out.
func (p *Proxy) CAPEM() []byte {
	ca := p.authority()
	if ca == nil {
		return nil
	}
	return ca.PEM()
}

// CAFingerprint returns the SHA-256 fingerprint of the CA's certificate,
// as openssl x509 -fingerprint -sha256 prints it, or "" when nothing is
// bound.
func (p *Proxy) CAFingerprint() string {
	ca := p.authority()
	if ca == nil {
		return ""
	}
	return ca.fingerprint()
}

// CAExpires returns when the CA stops being valid (zero when nothing is
// bound).
func (p *Proxy) CAExpires() time.Time {
	ca := p.authority()
	if ca == nil {
		return time.Time{}
	}
	return ca.cert.NotAfter
}

// authority returns the CA leaves are signed with, nil when nothing is
// bound. Half way through its life its successor is made and added to the
// bundle, which is written again; an hour before it expires the successor
// signs instead. So a process started at any time trusts the CA that
// signs for at least half a lifetime (15 days by default), and a bot that
// runs for months never holds a CA key older than a lifetime; a process
// started before a successor was published must be started again within
// the old CA's life.
func (p *Proxy) authority() *authority {
	p.caMu.Lock()
	defer p.caMu.Unlock()
	if p.ca == nil {
		return nil
	}
	now := p.now()
	changed := false
	if p.next == nil && !now.Before(p.ca.cert.NotBefore.Add(clockSkew+p.caLifetime/2)) {
		next, err := newAuthority(p.hosts, p.caLifetime, p.now)
		if err != nil {
			p.logger.Warn("credential proxy: cannot make the CA's successor; the current one stays", "expires", p.ca.cert.NotAfter, "err", err)
		} else {
			p.next, changed = next, true
			p.logger.Info("credential proxy: the CA's successor is in the bundle", "sha256", next.fingerprint(), "signs from", p.ca.cert.NotAfter.Add(-time.Hour))
		}
	}
	if p.next != nil && !now.Before(p.ca.cert.NotAfter.Add(-time.Hour)) {
		p.prevCA, p.ca, p.next, changed = p.ca, p.next, nil, true
		p.logger.Info("credential proxy: CA renewed", "sha256", p.ca.fingerprint(), "expires", p.ca.cert.NotAfter)
	}
	if changed && p.bundle != "" {
		if err := p.writeBundleLocked(); err != nil {
			p.logger.Error("credential proxy: the CA bundle cannot be written again; processes started from now on may not trust the proxy's certificates", "err", err)
		}
	}
	return p.ca
}

// Close stops the proxy and closes every connection it holds.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	for c := range p.conns {
		c.Close()
	}
	p.mu.Unlock()
	err := p.srv.Close()
	p.transport.CloseIdleConnections()
	p.wg.Wait()
	return err
}

// track remembers c for Close; false when the proxy is closed already.
func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}

// ServeHTTP serves the proxy: CONNECT tunnels, plain HTTP requests in
// absolute form, and a one-line answer at "/" that tells the proxy is up.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodConnect:
		p.connect(w, r)
	case r.URL.IsAbs():
		p.forwardPlain(w, r)
	case r.URL.Path == "/":
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "telegram-agent credential proxy")
	default:
		writeRefusal(w, refuse(http.StatusNotFound, "credential proxy: this is an HTTP proxy; set HTTPS_PROXY to %s and ask for the URL you want", p.URL()))
	}
}

// bound returns the credentials bound to host.
func (p *Proxy) bound(host string) bool { return matchAny(p.hosts, host) }

// reachable refuses a host the egress tier does not let agents reach.
func (p *Proxy) reachable(host string) error {
	if p.egress == Open || p.bound(host) || matchAny(p.allow, host) {
		return nil
	}
	return refuse(http.StatusForbidden, "credential proxy: AGENT_EGRESS=%s: %s is neither a bound host (CREDENTIAL_HOSTS) nor in AGENT_EGRESS_ALLOW, so agent processes may not reach it; ask the operator to add it to AGENT_EGRESS_ALLOW", p.egress, host)
}

// writeRefusal answers a refused request with its status and reason, in
// the body and in a header a client that hides the body still shows.
func writeRefusal(w http.ResponseWriter, err error) {
	status, reason := http.StatusBadGateway, err.Error()
	var r *refusedError
	if errors.As(err, &r) {
		status = r.status
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.Header().Set("X-Credential-Proxy-Refused", reason)
	w.WriteHeader(status)
	fmt.Fprintln(w, reason)
}

// upstreamError answers a plain HTTP request the upstream did not
// answer.
func (p *Proxy) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	var ref *refusedError
	if !errors.As(err, &ref) {
		err = refuse(http.StatusBadGateway, "credential proxy: %s did not answer: %v", r.Host, err)
	}
	writeRefusal(w, err)
}

// statusOf is the status a refusal answers with.
func statusOf(err error) int {
	var r *refusedError
	if errors.As(err, &r) {
		return r.status
	}
	return http.StatusBadGateway
}

// printable reports whether s is printable ASCII without blanks.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] <= ' ' || s[i] >= 0x7f {
			return false
		}
	}
	return s != ""
}

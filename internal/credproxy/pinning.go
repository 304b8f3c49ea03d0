package credproxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"slices"
	"sync"
)

// certRefusalsKept is how many refusals of the proxy's certificate are
// kept for [Proxy.Since]: the latest, enough for the commands running at
// once.
const certRefusalsKept = 32

// certRefusals records the clients that would not take the proxy's leaf
// for a bound host: a client that pins the host's certificate or key (a
// pinned SDK, curl --pinnedpubkey) or trusts only a CA store of its own
// fails there, and its own message (a bad certificate, an unknown CA)
// does not say that the proxy is in the way, nor what to do. The bash
// tool asks after each command ([Proxy.Since]) and adds one line to its
// result.
type certRefusals struct {
	mu      sync.Mutex
	seq     uint64 // how many were ever recorded
	entries []certRefusal
}

// certRefusal is one client that refused the proxy's certificate.
type certRefusal struct {
	seq  uint64
	host string
	how  string
}

// record remembers that a client refused the certificate for host, as
// how says.
func (r *certRefusals) record(host, how string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	if len(r.entries) == certRefusalsKept {
		r.entries = slices.Delete(r.entries, 0, 1)
	}
	r.entries = append(r.entries, certRefusal{seq: r.seq, host: host, how: how})
}

// Mark returns where the record of refused certificates stands, for
// [Proxy.Since] after a command.
func (p *Proxy) Mark() uint64 {
	p.refusals.mu.Lock()
	defer p.refusals.mu.Unlock()
	return p.refusals.seq
}

// Since returns one line per bound host a client refused the proxy's
// certificate for after mark (from [Proxy.Mark]), saying why that
// happens and what to do: the line the bash tool adds to a command's
// result. The proxy cannot tell which agent process a connection came
// from, so a command that ran while another session's client refused
// gets the line too; it names a host, never a value.
func (p *Proxy) Since(mark uint64) []string {
	p.refusals.mu.Lock()
	defer p.refusals.mu.Unlock()
	var hosts, lines []string
	for _, e := range p.refusals.entries {
		if e.seq <= mark || slices.Contains(hosts, e.host) {
			continue
		}
		hosts = append(hosts, e.host)
		lines = append(lines, fmt.Sprintf("[credential proxy: a client refused the proxy's certificate for %s (%s): it likely pins the host's certificate or trusts only its own CA store. Requests to %s go through the proxy, which puts the real credential in; point the client at the CA bundle in SSL_CERT_FILE (or its own CA option), or use a client that does not pin (curl, git, gh). ssh cannot carry the stand-in: use HTTPS.]", e.host, e.how, e.host))
	}
	return lines
}

// certificateAlerts are the alerts a client sends when it will not take
// the server's certificate, as crypto/tls names them.
var certificateAlerts = []string{
	"tls: bad certificate",
	"tls: unsupported certificate",
	"tls: revoked certificate",
	"tls: expired certificate",
	"tls: unknown certificate",
	"tls: unknown certificate authority",
	"tls: access denied",
}

// handshakeRefusal returns how a failed handshake with the agent's client
// shows that it refused the certificate, or "" when it does not: an alert
// about the certificate, or the connection closed once the certificate
// was sent (offered).
func handshakeRefusal(err error, offered bool) string {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" && op.Err != nil && slices.Contains(certificateAlerts, op.Err.Error()) {
		return "it answered " + op.Err.Error()
	}
	if offered && (errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed)) {
		return "it closed the connection on seeing the certificate"
	}
	return ""
}

// refusedCertificate records a client that refused the certificate for
// host, and logs it: the host, never a value.
func (p *Proxy) refusedCertificate(host, how string) {
	p.refusals.record(host, how)
	p.logger.Info("credential proxy: a client refused the proxy's certificate; it may pin certificates or trust only its own CA store", "host", host, "how", how)
}

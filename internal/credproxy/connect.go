package credproxy

import (
	"bufio"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"sync"
	"time"
)

// handshakeTimeout is how long the agent's client has for the TLS
// handshake in a tunnel to a bound host.
const handshakeTimeout = 15 * time.Second

// connect serves a CONNECT request: a bound host's TLS is terminated here
// (see intercept), any other host the tier lets agents reach gets a plain
// tunnel to an address the dialer checked.
func (p *Proxy) connect(w http.ResponseWriter, r *http.Request) {
	host, port := splitTarget(r.Host, "443")
	if err := p.reachable(host); err != nil {
		writeRefusal(w, err)
		return
	}
	if p.bound(host) {
		p.intercept(w, host, port)
		return
	}
	up, err := p.dialer.dial(r.Context(), net.JoinHostPort(host, port))
	if err != nil {
		writeRefusal(w, err)
		return
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		up.Close()
		return
	}
	if !p.track(conn) {
		conn.Close()
		up.Close()
		return
	}
	defer p.untrack(conn)
	p.track(up)
	defer p.untrack(up)
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		conn.Close()
		up.Close()
		return
	}
	tunnel(bufferedConn{conn, brw.Reader}, up)
}

// tunnel copies both ways until both sides are done, passing a half
// close on, then closes both.
func tunnel(client net.Conn, up net.Conn) {
	var wg sync.WaitGroup
	wg.Add(2)
	half := func(dst, src net.Conn) {
		defer wg.Done()
		_, _ = io.Copy(dst, src)
		if cw, ok := dst.(interface{ CloseWrite() error }); ok {
			_ = cw.CloseWrite()
		} else {
			dst.Close()
		}
	}
	go half(up, client)
	go half(client, up)
	wg.Wait()
	client.Close()
	up.Close()
}

// bufferedConn is a hijacked connection whose first bytes may be in the
// server's reader already (a ClientHello sent right after CONNECT).
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// CloseWrite passes a half close on to the TCP connection.
func (c bufferedConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return c.Conn.Close()
}

// intercept terminates TLS for a bound host with a leaf the CA signs for
// it, and serves the HTTP/1.1 requests inside to the real host (see
// serveTunnel).
func (p *Proxy) intercept(w http.ResponseWriter, host, port string) {
	leaf, err := p.authority().leaf(host)
	if err != nil {
		writeRefusal(w, refuse(http.StatusBadGateway, "credential proxy: %v", err))
		return
	}
	conn, brw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	if !p.track(conn) {
		conn.Close()
		return
	}
	defer p.untrack(conn)
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		conn.Close()
		return
	}
	// The leaf goes through GetCertificate, so a failed handshake tells
	// whether the client saw it before it gave up.
	offered := false
	tc := tls.Server(bufferedConn{conn, brw.Reader}, &tls.Config{
		GetCertificate: func(*tls.ClientHelloInfo) (*tls.Certificate, error) {
			offered = true
			return leaf, nil
		},
		NextProtos: []string{"http/1.1"},
		MinVersion: tls.VersionTLS12,
		// Loopback: full records from the first byte, so a new
		// tunnel's first answers go in one record and one write, not in
		// the small records that help a slow link start.
		DynamicRecordSizingDisabled: true,
	})
	tc.SetDeadline(time.Now().Add(handshakeTimeout))
	if err := tc.Handshake(); err != nil {
		if how := handshakeRefusal(err, offered); how != "" {
			p.refusedCertificate(host, how)
		}
		tc.Close()
		return
	}
	tc.SetDeadline(time.Time{})
	p.serveTunnel(tc, host, port)
}

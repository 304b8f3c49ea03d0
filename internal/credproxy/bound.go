package credproxy

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// tunnelIdle is how long a tunnel to a bound host waits for the agent's
// next request.
const tunnelIdle = 5 * time.Minute

// pinCheckWindow is how soon after the handshake a client that closes
// the tunnel without a request counts as one that refused the
// certificate once it saw it.
const pinCheckWindow = 2 * time.Second

// hopHeaders are the headers of one connection, never passed on.
var hopHeaders = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authorization", "Proxy-Authenticate", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// upstreamConn is the connection to the real host a tunnel's requests go
// on, made on the first request and again when the host closed it.
type upstreamConn struct {
	p    *Proxy
	conn net.Conn
	r    *bufio.Reader
	w    *bufio.Writer
	used bool // a request went on it: a failure may be the host closing it
}

func (u *upstreamConn) close() {
	if u.conn != nil {
		u.conn.Close()
		u.p.untrack(u.conn)
		u.conn = nil
	}
}

// serveTunnel serves the HTTP/1.1 requests inside a tunnel to a bound
// host, one at a time, in this goroutine: each must name that host, its
// stand-ins are checked and swapped (see inject), it goes to the real host
// over a connection of this tunnel's own (TLS verified against the
// system's roots), and the answer comes back with the real values
// replaced. A request that asks to upgrade (a WebSocket) turns the tunnel
// into a plain one to the host once it is answered with 101.
func (p *Proxy) serveTunnel(client net.Conn, host, port string) {
	defer client.Close()
	target := net.JoinHostPort(host, port)
	br := bufio.NewReaderSize(client, 16<<10)
	bw := &agentWriter{bw: bufio.NewWriterSize(client, 32<<10), conn: client}
	up := &upstreamConn{p: p}
	defer up.close()
	start := time.Now()
	for served := 0; ; served++ {
		client.SetReadDeadline(time.Now().Add(tunnelIdle))
		req, err := http.ReadRequest(br)
		if err != nil {
			if served == 0 && errors.Is(err, io.EOF) && time.Since(start) < pinCheckWindow {
				// A client that took the certificate sends a request; one
				// that checks a pin after the handshake (curl
				// --pinnedpubkey) closes here at once. A connection a
				// pool dialed and never used closes much later.
				p.refusedCertificate(host, "it closed the connection after the handshake without a request")
			}
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) && !isTimeout(err) {
				p.writeResponse(bw, refusalResponse(refuse(http.StatusBadRequest, "credential proxy: a request it cannot read: %v", err)), nil)
			}
			return
		}
		client.SetReadDeadline(time.Time{})
		if !p.roundTrip(client, br, bw, up, req, host, target) {
			return
		}
	}
}

// isTimeout reports a deadline that passed.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// roundTrip serves one request of a tunnel; false ends the tunnel.
func (p *Proxy) roundTrip(client net.Conn, br *bufio.Reader, bw *agentWriter, up *upstreamConn, req *http.Request, host, target string) bool {
	st := &useState{host: host}
	refusal := func(err error) bool {
		p.logger.Info("credential proxy: request refused", "method", req.Method, "host", host, "path", req.URL.Path, "reason", err.Error())
		// The rest of the body, if any, is not read: the connection
		// cannot carry another request.
		resp := refusalResponse(err)
		resp.Close = true
		p.writeResponse(bw, resp, nil)
		return false
	}
	if normalHost(req.Host) != host {
		return refusal(refuse(http.StatusMisdirectedRequest, "credential proxy: the request names the host %s inside a tunnel to %s; connect to the host you mean", normalHost(req.Host), host))
	}
	if err := p.inject(req, st); err != nil {
		return refusal(err)
	}
	if strings.EqualFold(req.Header.Get("Expect"), "100-continue") {
		// The body is read as it is sent on; the agent's client waits
		// for this before sending it.
		req.Header.Del("Expect")
		io.WriteString(bw, "HTTP/1.1 100 Continue\r\n\r\n")
		bw.Flush()
	}
	buffered, err := p.bufferBody(req, st)
	if err != nil {
		return refusal(err)
	}
	upgrade := req.Header.Get("Upgrade")
	for _, h := range connectionHeaders(req.Header) {
		req.Header.Del(h)
	}
	removeHop(req.Header)
	if upgrade != "" {
		req.Header.Set("Connection", "Upgrade")
		req.Header.Set("Upgrade", upgrade)
	}
	// What comes back is matched for the real values, which a
	// compressed body would hide.
	req.Header.Del("Accept-Encoding")
	if _, ok := req.Header["User-Agent"]; !ok {
		req.Header["User-Agent"] = []string{""} // no Go default for the agent's client
	}
	clientClose := req.Close
	req.Close = false

	resp, err := p.send(up, req, buffered, host, target)
	if err != nil {
		if st.bodyRefusal != nil {
			err = st.bodyRefusal
		}
		p.logUse(req, st, statusOf(err))
		var ref *refusedError
		if !errors.As(err, &ref) {
			err = refuse(http.StatusBadGateway, "credential proxy: %s did not answer: %v", host, err)
		}
		return refusal(err)
	}
	p.logUse(req, st, resp.StatusCode)
	if resp.StatusCode == http.StatusSwitchingProtocols && upgrade != "" {
		p.writeResponse(bw, resp, up.r)
		up.conn.SetDeadline(time.Time{})
		tunnel(bufferedConn{client, br}, bufferedConn{up.conn, up.r})
		up.close()
		return false
	}
	for _, h := range connectionHeaders(resp.Header) {
		resp.Header.Del(h)
	}
	removeHop(resp.Header)
	p.redactHeaders(resp.Header)
	if hasBody(req, resp) {
		resp.Body = newReplacingBody(resp.Body, p.answerPatterns(st))
	}
	done := resp.Close || clientClose
	resp.Close = done
	if err := p.writeResponse(bw, resp, up.r); err != nil {
		up.close()
		return false
	}
	resp.Body.Close()
	if resp.Close {
		up.close()
	}
	return !done
}

// send writes req to the host and reads the answer, skipping interim
// (1xx) answers. A connection the host closed while it was idle is made
// again once, when the request can be sent again (its body, if any, was
// read whole before).
func (p *Proxy) send(up *upstreamConn, req *http.Request, buffered []byte, host, target string) (*http.Response, error) {
	for attempt := 0; ; attempt++ {
		if up.conn == nil {
			if err := p.dialUpstream(up, req, host, target); err != nil {
				return nil, err
			}
		}
		reused := up.used
		replayable := req.Body == nil || req.Body == http.NoBody || buffered != nil
		if reused && !replayable && !up.alive() {
			up.close()
			continue
		}
		up.used = true
		if buffered != nil {
			req.Body = io.NopCloser(bytes.NewReader(buffered))
		}
		err := req.Write(up.w)
		if err == nil {
			err = up.w.Flush()
		}
		var resp *http.Response
		if err == nil {
			for {
				resp, err = http.ReadResponse(up.r, req)
				if err != nil || resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
					break
				}
			}
		}
		if err == nil {
			return resp, nil
		}
		up.close()
		if !reused || !replayable || attempt > 0 {
			return nil, err
		}
	}
}

// alive reports whether the host has not closed the idle connection: a
// request whose body cannot be sent again checks before it goes, waiting
// a millisecond at most.
func (u *upstreamConn) alive() bool {
	if u.r.Buffered() > 0 {
		return false // an idle connection has nothing to read
	}
	u.conn.SetReadDeadline(time.Now().Add(time.Millisecond))
	_, err := u.r.Peek(1)
	u.conn.SetReadDeadline(time.Time{})
	return isTimeout(err)
}

// dialUpstream connects up to the real host, TLS verified for host.
func (p *Proxy) dialUpstream(up *upstreamConn, req *http.Request, host, target string) error {
	raw, err := p.dialer.dial(req.Context(), target)
	if err != nil {
		return err
	}
	tc := tls.Client(raw, &tls.Config{ServerName: host, RootCAs: p.upRoots, MinVersion: tls.VersionTLS12, NextProtos: []string{"http/1.1"}})
	tc.SetDeadline(time.Now().Add(15 * time.Second))
	if err := tc.HandshakeContext(req.Context()); err != nil {
		raw.Close()
		return refuse(http.StatusBadGateway, "credential proxy: TLS with %s failed: %v", host, err)
	}
	tc.SetDeadline(time.Time{})
	if !p.track(tc) {
		tc.Close()
		return refuse(http.StatusServiceUnavailable, "credential proxy: shutting down")
	}
	up.conn, up.used = tc, false
	up.r = bufio.NewReaderSize(tc, 32<<10)
	up.w = bufio.NewWriterSize(tc, 16<<10)
	return nil
}

// bufferBody reads a body of known length up to bufferedBodyLimit whole
// and checks it for stand-ins before anything is sent, returning it; any
// other body is checked as it streams, and cut off where one shows.
func (p *Proxy) bufferBody(req *http.Request, st *useState) ([]byte, error) {
	if req.Body == nil || req.Body == http.NoBody || req.ContentLength == 0 {
		return nil, nil
	}
	if req.ContentLength > 0 && req.ContentLength <= bufferedBodyLimit {
		b, err := io.ReadAll(io.LimitReader(req.Body, req.ContentLength))
		if err != nil {
			return nil, refuse(http.StatusBadRequest, "credential proxy: read the request body: %v", err)
		}
		if c, ok := p.holds(string(b)); ok {
			return nil, p.inBody(c, st)
		}
		return b, nil
	}
	if len(p.creds) > 0 {
		req.Body = &scanBody{src: req.Body, p: p, st: st}
	}
	return nil, nil
}

// hasBody reports whether resp, the answer to req, has a body to pass on.
func hasBody(req *http.Request, resp *http.Response) bool {
	return req.Method != http.MethodHead && resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotModified &&
		resp.StatusCode >= 200 && resp.Body != nil && resp.Body != http.NoBody
}

// connectionHeaders returns the headers a Connection header names.
func connectionHeaders(h http.Header) []string {
	var out []string
	for _, v := range h["Connection"] {
		for f := range strings.SplitSeq(v, ",") {
			if f = strings.TrimSpace(f); f != "" && !strings.EqualFold(f, "close") && !strings.EqualFold(f, "keep-alive") {
				out = append(out, f)
			}
		}
	}
	return out
}

// removeHop removes the hop-by-hop headers.
func removeHop(h http.Header) {
	for _, k := range hopHeaders {
		delete(h, k)
	}
}

// redactHeaders redacts every value of h with the redactor (every form).
func (p *Proxy) redactHeaders(h http.Header) {
	for _, values := range h {
		for i, v := range values {
			values[i] = p.red.Redact(v)
		}
	}
}

// refusalResponse is the answer to a refused request.
func refusalResponse(err error) *http.Response {
	status, reason := http.StatusBadGateway, err.Error()
	var r *refusedError
	if errors.As(err, &r) {
		status = r.status
	}
	body := reason + "\n"
	h := http.Header{}
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Credential-Proxy-Refused", reason)
	return &http.Response{
		StatusCode: status, ProtoMajor: 1, ProtoMinor: 1, Header: h,
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)),
	}
}

// writeResponse writes resp to the agent's client. While the host has
// sent nothing more (src buffers nothing), what is written so far is
// flushed, so a streamed answer reaches the agent as it comes.
func (p *Proxy) writeResponse(w *agentWriter, resp *http.Response, src *bufio.Reader) error {
	if resp.Body != nil && src != nil {
		resp.Body = &flushingBody{ReadCloser: resp.Body, src: src, w: w}
	}
	if err := resp.Write(w); err != nil {
		return fmt.Errorf("credential proxy: answer the agent: %w", err)
	}
	return w.Flush()
}

// directWriteMin is the shortest write that goes straight to the agent's
// connection when nothing is buffered: a piece of a body, not a header
// line.
const directWriteMin = 4 << 10

// agentWriter is the agent's side of a tunnel, buffered. It has no
// ReadFrom, unlike the bufio.Writer inside, on purpose: bufio's ReadFrom
// reads the body into its own buffer, which the flush in flushingBody
// would empty under it, sending stale bytes in place of the answer's. A
// body is copied through a buffer of its own instead, and a piece of it
// written when nothing is buffered goes straight to the connection, so
// it is copied no more than ReadFrom would.
type agentWriter struct {
	bw   *bufio.Writer
	conn io.Writer
}

func (w *agentWriter) Write(p []byte) (int, error) {
	if len(p) >= directWriteMin && w.bw.Buffered() == 0 {
		return w.conn.Write(p)
	}
	return w.bw.Write(p)
}

// Flush writes what is buffered to the connection.
func (w *agentWriter) Flush() error { return w.bw.Flush() }

// Buffered returns how many bytes are buffered.
func (w *agentWriter) Buffered() int { return w.bw.Buffered() }

// flushingBody flushes w before a read that would wait for the host.
type flushingBody struct {
	io.ReadCloser
	src *bufio.Reader
	w   *agentWriter
}

func (b *flushingBody) Read(p []byte) (int, error) {
	if b.src.Buffered() == 0 && b.w.Buffered() > 0 {
		if err := b.w.Flush(); err != nil {
			return 0, err
		}
	}
	return b.ReadCloser.Read(p)
}

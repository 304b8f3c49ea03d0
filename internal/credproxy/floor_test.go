package credproxy_test

import (
	"bufio"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http"
	"net/url"
	"sync"
	"testing"
	"time"
)

// floorProxy is the least a proxy that ends TLS for a host can do, as a
// floor for what the credential proxy costs: it answers CONNECT, ends
// the agent's TLS with a leaf for the host, makes its own TLS connection
// to the upstream (verified) and copies bytes both ways. It parses no
// HTTP inside, swaps nothing and redacts nothing: the cost of a second
// TLS hop on loopback, and no more.
type floorProxy struct {
	ln net.Listener
	wg sync.WaitGroup
	c  *http.Client
}

// startFloorProxy serves CONNECT on loopback with leaf, dialing upAddr for
// every host and trusting roots upstream.
func startFloorProxy(t testing.TB, leaf tls.Certificate, roots *x509.CertPool, upAddr string) *floorProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u, _ := url.Parse("http://" + ln.Addr().String())
	tr := &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: &tls.Config{RootCAs: roots}}
	f := &floorProxy{ln: ln, c: &http.Client{Transport: tr, Timeout: 30 * time.Second}}
	t.Cleanup(func() { ln.Close(); tr.CloseIdleConnections(); f.wg.Wait() })
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.wg.Add(1)
			go func() { defer f.wg.Done(); f.serve(c, leaf, roots, upAddr) }()
		}
	}()
	return f
}

func (f *floorProxy) serve(c net.Conn, leaf tls.Certificate, roots *x509.CertPool, upAddr string) {
	defer c.Close()
	br := bufio.NewReader(c)
	req, err := http.ReadRequest(br)
	if err != nil || req.Method != http.MethodConnect {
		return
	}
	host, _, _ := net.SplitHostPort(req.Host)
	raw, err := net.Dial("tcp", upAddr)
	if err != nil {
		return
	}
	up := tls.Client(raw, &tls.Config{ServerName: host, RootCAs: roots, NextProtos: []string{"http/1.1"}})
	defer up.Close()
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	down := tls.Server(bufferedConn{c, br}, &tls.Config{Certificates: []tls.Certificate{leaf}, NextProtos: []string{"http/1.1"}})
	done := make(chan struct{})
	go func() {
		io.Copy(up, down)
		up.CloseWrite()
		close(done)
	}()
	io.Copy(down, up)
	down.CloseWrite()
	<-done
}

// bufferedConn is a connection whose first bytes may be in r.
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

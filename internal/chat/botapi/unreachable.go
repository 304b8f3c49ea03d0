package botapi

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"net/url"
	"syscall"
)

// Network failures: why a call got no answer from the Bot API server, as
// an operator fixes it (Error.Network).
const (
	// NetworkDNS: the server's name does not resolve.
	NetworkDNS = "DNS"
	// NetworkTLS: the TLS handshake failed (a certificate not trusted,
	// expired or for another name, or a server that speaks no TLS).
	NetworkTLS = "TLS"
	// NetworkRefused: nothing listens at the address.
	NetworkRefused = "refused"
	// NetworkTimeout: no answer in time (a firewall that drops, a proxy).
	NetworkTimeout = "timeout"
	// NetworkOther: the connection failed some other way (reset,
	// unreachable network).
	NetworkOther = "connection"
)

// networkKind sorts the transport error of a call that got no answer; ""
// for a call cancelled (the bot stopping). A try's own deadline passing is
// a timeout.
func networkKind(err error) string {
	if errors.Is(err, context.Canceled) {
		return ""
	}
	var dns *net.DNSError
	var unknownCA x509.UnknownAuthorityError
	var invalid x509.CertificateInvalidError
	var hostname x509.HostnameError
	var verify *tls.CertificateVerificationError
	var header tls.RecordHeaderError
	var alert tls.AlertError
	var ne net.Error
	switch {
	case errors.As(err, &dns) && !dns.IsTimeout:
		return NetworkDNS
	case errors.As(err, &verify), errors.As(err, &unknownCA), errors.As(err, &invalid), errors.As(err, &hostname),
		errors.As(err, &header), errors.As(err, &alert):
		return NetworkTLS
	case errors.Is(err, syscall.ECONNREFUSED):
		return NetworkRefused
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		return NetworkTimeout
	default:
		return NetworkOther
	}
}

// Unreachable reports whether err is a call that got no answer from the
// server for a network failure, and returns the server's host (host or
// host:port, never a path, which holds the token) and the failure's kind
// (NetworkDNS, NetworkTLS, NetworkRefused, NetworkTimeout or NetworkOther).
func Unreachable(err error) (host, kind string, ok bool) {
	var e *Error
	if !errors.As(err, &e) || e.Code != 0 || e.Network == "" {
		return "", "", false
	}
	return e.Host, e.Network, true
}

// hostOf returns the host of a base URL, for messages: never its path.
func hostOf(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	return u.Host
}

package credproxy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
)

// resolver returns the addresses to connect to for host and port; the
// default asks the system's resolver for host, and tests answer
// themselves (with a fake upstream's port).
type resolver func(ctx context.Context, host, port string) ([]netip.AddrPort, error)

// systemResolver resolves host with the system's resolver.
func systemResolver(ctx context.Context, host, port string) ([]netip.AddrPort, error) {
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("port %q: %w", port, err)
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else if addrs, err = net.DefaultResolver.LookupNetIP(ctx, "ip", host); err != nil {
		return nil, err
	}
	out := make([]netip.AddrPort, 0, len(addrs))
	for _, a := range addrs {
		out = append(out, netip.AddrPortFrom(a.Unmap(), uint16(n)))
	}
	return out, nil
}

// refusedError is a request the proxy refuses, with the reason the
// agent's client shows: what was refused and what to do about it.
type refusedError struct {
	status int
	reason string
}

func (e *refusedError) Error() string { return e.reason }

// refuse returns a refusal with status and the reason formatted.
func refuse(status int, format string, args ...any) *refusedError {
	return &refusedError{status: status, reason: fmt.Sprintf(format, args...)}
}

// internalPrefixes are the address ranges an agent's request may not reach
// upstream unless the operator named the host: loopback, link-local (the
// cloud metadata service at 169.254.169.254 among them), private and
// shared address space (Alibaba's metadata at 100.100.100.200), the
// unspecified and "this network" ranges, multicast and broadcast, and the
// IPv6 unique local range (AWS's metadata at fd00:ec2::254).
var internalPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("10.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("127.0.0.0/8"),
	netip.MustParsePrefix("169.254.0.0/16"),
	netip.MustParsePrefix("172.16.0.0/12"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.168.0.0/16"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("224.0.0.0/3"),
	netip.MustParsePrefix("::/127"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("fc00::/7"),
	netip.MustParsePrefix("fe80::/10"),
	netip.MustParsePrefix("ff00::/8"),
}

// internal reports whether a is in one of internalPrefixes.
func internal(a netip.Addr) bool {
	a = a.Unmap()
	for _, p := range internalPrefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// upstreamDialer connects to the hosts agents' requests go to. It
// resolves the name itself and connects to an address it checked, so a
// name that resolves to an internal address (or is made to, between a
// check and the connection) reaches nothing internal unless the operator
// named the host.
type upstreamDialer struct {
	resolve resolver
	// named are host patterns the operator wrote (CREDENTIAL_HOSTS,
	// AGENT_EGRESS_ALLOW): they may resolve to internal addresses.
	named []string
	d     net.Dialer
}

// dial connects to hostport, trying each address the host resolves to.
func (u *upstreamDialer) dial(ctx context.Context, hostport string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(hostport)
	if err != nil {
		return nil, refuse(400, "credential proxy: %q is not host:port", hostport)
	}
	host = normalHost(host)
	addrs, err := u.resolve(ctx, host, port)
	if err != nil {
		return nil, refuse(502, "credential proxy: cannot resolve %s: %v", host, err)
	}
	mayBeInternal := matchAny(u.named, host)
	var errs []error
	for _, a := range addrs {
		if internal(a.Addr()) && !mayBeInternal {
			errs = append(errs, refuse(403, "credential proxy: %s resolves to %s, an internal address (loopback, link-local, cloud metadata or private), which agent processes may not reach; the operator can name the host in AGENT_EGRESS_ALLOW to allow it", host, a.Addr().Unmap()))
			continue
		}
		c, err := u.d.DialContext(ctx, "tcp", a.String())
		if err == nil {
			return c, nil
		}
		errs = append(errs, err)
	}
	if len(errs) == 0 {
		return nil, refuse(502, "credential proxy: %s has no address", host)
	}
	var r *refusedError
	if errors.As(errs[0], &r) && len(errs) == 1 {
		return nil, r
	}
	return nil, fmt.Errorf("credential proxy: connect to %s: %w", host, errors.Join(errs...))
}

// splitTarget splits a request's host:port, a bare host getting def.
func splitTarget(hostport, def string) (host, port string) {
	h, p, err := net.SplitHostPort(hostport)
	if err != nil {
		return normalHost(hostport), def
	}
	return normalHost(h), p
}

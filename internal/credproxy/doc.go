// Package credproxy keeps the credentials the agent may use out of its
// hands: an agent process gets a stand-in for each bound variable, a
// random value shaped like the real one, and reaches the network through
// an HTTP proxy on loopback that puts the real value in place of the
// stand-in only in the Authorization header of requests to the hosts the
// credential is bound to.
//
// For a bound host the proxy terminates TLS with a leaf certificate from a
// certificate authority made at start (ECDSA, its key in memory only,
// name-constrained to the bound hosts, short-lived), verifies the upstream
// against the system roots, and redacts the real value from what comes
// back. A stand-in anywhere else in such a request (its path, query, body
// or another header) refuses it, so the real value never goes where a host
// could echo it. Any other host is a plain tunnel: what the agent sends
// there holds stand-ins at most. Loopback, link-local, cloud metadata and
// private addresses are refused upstream unless the operator named the
// host, and in the allow-list egress tier only bound and listed hosts are
// reached.
//
// The proxy only polices the processes that use it; keeping a process that
// ignores the proxy variables from going around it is the sandbox
// launcher's part, configured from [Proxy.Enforcement].
package credproxy

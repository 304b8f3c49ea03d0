package mcp

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// reservedHeaders are the headers the Streamable HTTP transport sets itself;
// a configuration may not set them.
var reservedHeaders = []string{
	"Accept", "Connection", "Content-Length", "Content-Type", "Host",
	"Last-Event-Id", "Transfer-Encoding", "Upgrade",
}

// credentialHeaderWords are what a header's name contains when its value is
// a credential, so that a value written literally in the configuration is a
// secret too (a ${VAR} value always is).
var credentialHeaderWords = []string{"auth", "cookie", "key", "password", "secret", "session", "token"}

// Remote reports whether the server is reached over Streamable HTTP at URL
// rather than started as a stdio command.
func (sc ServerConfig) Remote() bool { return sc.URL != "" }

// checkTransport refuses an entry that mixes the keys of a stdio server
// (command, args, env) with those of a Streamable HTTP one (url, headers).
func checkTransport(fsrv fileServer) error {
	switch {
	case fsrv.URL != nil && fsrv.Command != nil:
		return errors.New(`both "command" and "url": a server is either a stdio command or a Streamable HTTP url, not both`)
	case fsrv.URL != nil && (len(fsrv.Args) > 0 || len(fsrv.Env) > 0):
		return errors.New(`"args" and "env" are for a stdio "command"; a "url" server takes "headers"`)
	case fsrv.URL == nil && len(fsrv.Headers) > 0:
		return errors.New(`"headers" are for a Streamable HTTP "url"; a stdio "command" gets its credentials through "env"`)
	}
	return nil
}

// parseRemote builds a Streamable HTTP server from its entry: the url and
// the headers, with their ${VAR} references expanded. A header whose value
// expands a variable, or whose name says it holds a credential, is a
// secret. Plain http:// to a host other than a loopback address is refused
// when the request carries anything expanded or any header (it would cross
// the network in clear text), and a warning otherwise.
func parseRemote(name string, fsrv fileServer, x *expander) (ServerConfig, []string, error) {
	sc := ServerConfig{Name: name, Disabled: fsrv.Disabled}
	var errs, refused []error
	var warnings []string
	note := func(where string, err error) {
		if errors.Is(err, errHostSecret) {
			refused = append(refused, fmt.Errorf("%s: %w", where, err))
		} else if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
		}
	}

	raw, urlVars, err := x.expand(*fsrv.URL)
	note("url", err)
	var u *url.URL
	if err == nil {
		u, err = checkURL(raw)
		note("url", err)
		sc.URL = raw
		// A token written into the url (?api_key=...) is a credential as
		// a header's is: the transport's errors quote the url.
		for _, v := range spawnpolicy.URLCredentials(raw) {
			x.remember(v)
		}
	} else {
		// The error refuses an enabled server; a disabled one keeps its
		// url as written (references, no values), so that it is still a
		// remote one.
		sc.URL = *fsrv.URL
	}

	names := slices.Sorted(maps.Keys(fsrv.Headers))
	if len(names) > 0 {
		sc.Headers = make(map[string]string, len(names))
	}
	for _, k := range names {
		where := "headers " + k
		if err := checkHeaderName(k); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", where, err))
			continue
		}
		v, vars, err := x.expand(fsrv.Headers[k])
		note(where, err)
		if err != nil {
			continue
		}
		if strings.ContainsAny(v, "\r\n\x00") {
			errs = append(errs, fmt.Errorf("%s: the value holds a line break or a NUL byte", where))
			continue
		}
		if len(vars) == 0 && credentialHeader(k) {
			x.remember(v)
			if i := strings.IndexByte(v, ' '); i > 0 {
				// "Bearer <token>": the credential alone is a secret too.
				x.remember(strings.TrimSpace(v[i+1:]))
			}
			if len(v) >= MinimumSecretLength && !sc.Disabled {
				warnings = append(warnings, fmt.Sprintf("headers %s holds a credential written in the configuration, which the bot's user can read; write ${VAR} and set the variable in the bot's environment instead", k))
			}
		}
		sc.Headers[http.CanonicalHeaderKey(k)] = v
	}

	// Plain http:// to a loopback address is a sidecar's ordinary set-up and
	// gets no warning: no certificate tells the bot which local process
	// answers, which the guide says (Streamable HTTP servers).
	if u != nil && u.Scheme == "http" && !loopbackHost(u.Hostname()) {
		// The host is named only when no expanded value can be in it.
		host := "a host that is not a loopback address"
		if len(urlVars) == 0 {
			host = u.Hostname() + " (not a loopback address)"
		}
		if len(sc.Headers) > 0 || len(urlVars) > 0 {
			errs = append(errs, fmt.Errorf("url: plain http:// to %s would send the headers and the url in clear text over the network; use https:// (or a loopback address)", host))
		} else if !sc.Disabled {
			warnings = append(warnings, fmt.Sprintf("url: plain http:// to %s is not encrypted; use https:// unless the network between the bot and the server is private", host))
		}
	}

	// As for a stdio server: a host secret is refused even when the
	// server is disabled, and only a disabled server may have other
	// problems.
	if err := errors.Join(refused...); err != nil {
		return ServerConfig{}, warnings, errors.Join(err, errors.Join(errs...))
	}
	if err := errors.Join(errs...); err != nil && !sc.Disabled {
		return ServerConfig{}, warnings, err
	}
	return sc, warnings, nil
}

// checkURL parses an expanded url and checks that it is an absolute http or
// https URL without credentials. Its errors never quote the url, which may
// hold an expanded value.
func checkURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, errors.New("not a valid URL")
	case u.Scheme != "https" && u.Scheme != "http":
		return nil, errors.New("the scheme must be https:// (or http://)")
	case u.Host == "":
		return nil, errors.New("no host")
	case u.User != nil:
		return nil, errors.New(`credentials in the URL; send them in "headers" instead`)
	}
	return u, nil
}

// checkHeaderName refuses a name that is not an HTTP token or that the
// transport sets itself.
func checkHeaderName(k string) error {
	if k == "" || strings.IndexFunc(k, func(r rune) bool { return !isTokenChar(r) }) >= 0 {
		return errors.New("not a valid header name")
	}
	canonical := http.CanonicalHeaderKey(k)
	if slices.Contains(reservedHeaders, canonical) || strings.HasPrefix(canonical, "Mcp-") {
		return errors.New("the MCP transport sets this header itself")
	}
	return nil
}

// isTokenChar reports whether r may appear in an HTTP header name
// (RFC 9110 token).
func isTokenChar(r rune) bool {
	switch {
	case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9':
		return true
	}
	return strings.ContainsRune("!#$%&'*+-.^_`|~", r)
}

// credentialHeader reports whether a header's name says it carries a
// credential (Authorization, X-API-Key, Cookie, ...).
func credentialHeader(k string) bool {
	lower := strings.ToLower(k)
	for _, w := range credentialHeaderWords {
		if strings.Contains(lower, w) {
			return true
		}
	}
	return false
}

// loopbackHost reports whether host is localhost or a loopback address, so
// that plain http:// to it never crosses a network.
func loopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

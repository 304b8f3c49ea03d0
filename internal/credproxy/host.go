package credproxy

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// errBareStar refuses a host list entry that matches every host.
var errBareStar = errors.New("a bare * would match every host; name the hosts, or a domain as *.example.com")

// normalHost returns host lower-cased, without a trailing dot, a port or
// IPv6 brackets: the form hosts are matched in.
func normalHost(host string) string {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	return strings.ToLower(host)
}

// parseHost checks one entry of a host list and returns it normalized: a
// DNS name, or a glob "*.domain" with at least two labels after the star;
// with ipOK, an IP address too. The error names the entry (a host is no
// secret).
func parseHost(entry string, ipOK bool) (string, error) {
	h := strings.ToLower(strings.TrimSuffix(strings.TrimSpace(entry), "."))
	switch {
	case h == "":
		return "", errors.New("an empty host")
	case h == "*":
		return "", errBareStar
	}
	if a, err := netip.ParseAddr(strings.Trim(h, "[]")); err == nil {
		if !ipOK {
			return "", fmt.Errorf("%q is an IP address: bind a host name", entry)
		}
		return a.String(), nil
	}
	name := h
	if rest, ok := strings.CutPrefix(h, "*."); ok {
		name = rest
		if !strings.Contains(name, ".") {
			return "", fmt.Errorf("%q would match every host under a top-level domain; name a domain with at least two labels", entry)
		}
	}
	if strings.Contains(name, ":") {
		return "", fmt.Errorf("%q has a port: name the host alone (a binding holds for every port)", entry)
	}
	for label := range strings.SplitSeq(name, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return "", fmt.Errorf("%q is not a host name", entry)
		}
		for _, c := range label {
			if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '-' && c != '_' {
				return "", fmt.Errorf("%q is not a host name (only a leading *. may be a glob)", entry)
			}
		}
	}
	return h, nil
}

// hostMatch reports whether host (normalized) matches pattern (from
// parseHost): equal, or for "*.domain" any name below domain.
func hostMatch(pattern, host string) bool {
	if suffix, ok := strings.CutPrefix(pattern, "*"); ok {
		return strings.HasSuffix(host, suffix) && len(host) > len(suffix)
	}
	return pattern == host
}

// matchAny reports whether host matches one of patterns.
func matchAny(patterns []string, host string) bool {
	for _, p := range patterns {
		if hostMatch(p, host) {
			return true
		}
	}
	return false
}

// parseHostList parses a comma-separated host list; every bad entry is
// reported, prefixed with what.
func parseHostList(what, list string, ipOK bool) ([]string, error) {
	var out []string
	var errs []error
	for entry := range strings.SplitSeq(list, ",") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		h, err := parseHost(entry, ipOK)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", what, err))
			continue
		}
		out = append(out, h)
	}
	return out, errors.Join(errs...)
}

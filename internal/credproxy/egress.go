package credproxy

import (
	"fmt"
	"strings"
)

// Egress is the egress tier: which hosts agent processes may reach.
type Egress int

const (
	// Open lets agent processes reach any host that is not internal
	// (AGENT_EGRESS=open, the default).
	Open Egress = iota
	// Allowlist lets them reach only the bound hosts and those
	// AGENT_EGRESS_ALLOW lists (AGENT_EGRESS=allowlist); without a way
	// to enforce it in the kernel, the bot starts with a warning.
	Allowlist
	// AllowlistRequired is Allowlist that refuses to start the bot
	// where the kernel cannot enforce it (AGENT_EGRESS=required).
	AllowlistRequired
)

// String returns the tier as AGENT_EGRESS spells it.
func (e Egress) String() string {
	switch e {
	case Allowlist:
		return "allowlist"
	case AllowlistRequired:
		return "required"
	}
	return "open"
}

// ParseEgress reads AGENT_EGRESS: open (or blank), allowlist or required.
func ParseEgress(s string) (Egress, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "", "open":
		return Open, nil
	case "allowlist":
		return Allowlist, nil
	case "required":
		return AllowlistRequired, nil
	}
	return Open, fmt.Errorf("AGENT_EGRESS must be open, allowlist or required (an allow-list the kernel must enforce), not %q", strings.TrimSpace(s))
}

// ParseAllow reads AGENT_EGRESS_ALLOW: comma-separated host names, globs
// "*.example.com" and IP addresses. A bare "*" is an error.
func ParseAllow(list string) ([]string, error) {
	return parseHostList("AGENT_EGRESS_ALLOW", list, true)
}

// Enforcement is what the sandbox launcher needs to keep agent processes
// from going around the proxy: where it listens, and whether only it may
// be reached.
type Enforcement struct {
	// Addr is the proxy's listening address, on loopback, as host:port.
	Addr string
	// Port is its port.
	Port int
	// Allowlist reports AGENT_EGRESS=allowlist or required: agent
	// processes may connect to the proxy alone.
	Allowlist bool
	// Required reports AGENT_EGRESS=required: if the kernel cannot
	// enforce the allow-list, the bot must not start.
	Required bool
}

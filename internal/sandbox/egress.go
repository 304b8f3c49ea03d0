package sandbox

import "fmt"

// EgressTier is how the launcher confines a command's network to the
// egress proxy, so that a process that ignores the proxy variables
// (HTTPS_PROXY and the like) cannot go around it.
type EgressTier int

const (
	// EgressNone: the kernel offers no way to confine the network; the
	// proxy variables are a convention the agent may ignore.
	EgressNone EgressTier = iota
	// EgressLandlock: a Landlock TCP rule (ABI 4, Linux 6.7) lets a
	// command connect to the proxy's port only, and the seccomp filter
	// refuses every socket but Unix, netlink and TCP ones (no UDP: DNS
	// cannot carry data out; no raw or packet socket) and io_uring.
	EgressLandlock
	// EgressNamespace: the command runs in a network namespace of its
	// own (and a user namespace mapping its own ids) whose only
	// interface is lo, on which the launcher listens on the proxy's port
	// and passes each connection on to the proxy; the seccomp filter's
	// socket rules and, where the kernel has them, the Landlock TCP rule
	// hold as well.
	EgressNamespace
)

// String returns the tier's name, for the start-up line and doctor.
func (t EgressTier) String() string {
	switch t {
	case EgressNone:
		return "none"
	case EgressLandlock:
		return "landlock-tcp"
	case EgressNamespace:
		return "netns"
	}
	return fmt.Sprintf("EgressTier(%d)", int(t))
}

// Describe says in words what a command can reach under the tier.
func (t EgressTier) Describe() string {
	switch t {
	case EgressNamespace:
		return "agent processes run in a network namespace whose only way out is the egress proxy, and open no UDP, raw or packet socket"
	case EgressLandlock:
		return "agent processes may connect over TCP to the egress proxy's port only (on any address: Landlock rules name ports), and open no UDP, raw or packet socket"
	}
	return "agent processes reach the network directly: the proxy variables are a convention they may ignore"
}

// Egress confines the network of every command a launcher starts to the
// egress proxy ([WithEgress]).
type Egress struct {
	// ProxyPort is the egress proxy's TCP port on loopback: the one port
	// commands may connect to.
	ProxyPort uint16
}

// WithEgress confines every command's network to the egress proxy e, at
// the best tier the kernel offers ([DetectEgress]); [NewLauncher] fails
// when it offers none, so that an allow-list is never left to the agent's
// good will without the caller knowing. [Launcher.Egress] returns the
// tier.
func WithEgress(e Egress) Option {
	return func(l *Launcher) { l.egress = &e }
}

// Egress returns the tier the launcher confines its commands' network at
// (EgressNone without [WithEgress]), and why a better one is out of reach
// (nil at the best), for the start-up line and doctor to say.
func (l *Launcher) Egress() (EgressTier, error) { return l.egressTier, l.egressShort }

//go:build linux

package sandbox

import (
	"errors"
	"fmt"
)

// landlockNetABI is the first Landlock ABI with TCP rules (Linux 6.7).
const landlockNetABI = 4

// DetectEgress returns the best tier at which this kernel lets the
// launcher confine a command's network to the egress proxy, and with
// EgressNone the reason. It asks the kernel without confining anything.
//
// A network namespace whose only way out is the proxy would also hold
// where Landlock has no TCP rules, but needs unprivileged user namespaces,
// which Docker's default seccomp profile refuses; the launcher does not
// create one.
func DetectEgress() (EgressTier, error) {
	if abi := ABI(); abi < landlockNetABI {
		return EgressNone, fmt.Errorf("the kernel's Landlock ABI is %d, and TCP rules need ABI %d (Linux 6.7)", abi, landlockNetABI)
	}
	if Seccomp() == SeccompNone {
		return EgressNone, errors.New("the kernel offers no seccomp filter to refuse UDP and raw sockets")
	}
	return EgressLandlock, nil
}

//go:build linux

package sandbox

import (
	"errors"
	"fmt"
)

// landlockNetABI is the first Landlock ABI with TCP rules (Linux 6.7).
const landlockNetABI = 4

// DetectEgress returns the best tier at which this kernel lets a launcher
// of executable (the bot's binary) confine a command's network to the
// egress proxy, and the reason the better tiers are out of reach (nil at
// the best). The namespace tier is tried for real: a dry run of the
// launcher's namespace stage, as the caller, which user namespaces refused
// (Docker's default seccomp profile, a sysctl) or capabilities refused
// inside them (Ubuntu's AppArmor policy) make fail; an empty executable
// skips it. Every tier needs the seccomp filter, which refuses UDP and raw
// sockets.
func DetectEgress(executable string) (EgressTier, error) {
	if Seccomp() == SeccompNone {
		return EgressNone, errors.New("the kernel offers no seccomp filter to refuse UDP and raw sockets")
	}
	var errs []error
	if executable != "" {
		err := probeNamespace(executable)
		if err == nil {
			return EgressNamespace, nil
		}
		errs = append(errs, fmt.Errorf("no network namespace: %w", err))
	}
	if abi := ABI(); abi < landlockNetABI {
		errs = append(errs, fmt.Errorf("the kernel's Landlock ABI is %d, and TCP rules need ABI %d (Linux 6.7)", abi, landlockNetABI))
		return EgressNone, errors.Join(errs...)
	}
	return EgressLandlock, errors.Join(errs...)
}

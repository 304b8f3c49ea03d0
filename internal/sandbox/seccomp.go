package sandbox

// SeccompSupport is what the launcher's seccomp filter can do on this
// kernel.
type SeccompSupport int

const (
	// SeccompNone: no filter (no seccomp filters, or an architecture the
	// filter is not written for); calls on other processes are left to
	// the kernel's same-uid checks.
	SeccompNone SeccompSupport = iota
	// SeccompRefuse: calls on another process are refused, and so are
	// those naming the caller by its pid rather than 0 (no seccomp
	// listener before Linux 5.5).
	SeccompRefuse
	// SeccompSupervised: calls on another process are refused, the
	// caller's own allowed by pid or 0 (the launcher answers them).
	SeccompSupervised
)

// String describes s for the start-up line and doctor.
func (s SeccompSupport) String() string {
	switch s {
	case SeccompSupervised:
		return "seccomp: calls on another process refused"
	case SeccompRefuse:
		return "seccomp: calls on another process refused (and on the caller's own pid but by 0)"
	}
	return "seccomp: none (calls on another process only as the kernel's same-uid checks allow)"
}

//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// target is how a system call names the process (or group) it acts on.
type target int

const (
	// pidArg0 and pidArg1: that argument is a pid; 0 is the caller.
	pidArg0 target = iota
	pidArg1
	// whichWho: argument 0 says what argument 1 is (a process, a process
	// group or a user: setpriority, ioprio_set); only a process may be
	// the caller's own.
	whichWho
	// twoPids: arguments 0 and 1 are both pids (kcmp), with no 0 form.
	twoPids
	// byPidfd: the process is a pidfd, which a filter cannot resolve,
	// and the launcher could not check without a race (another thread
	// may swap the descriptor before the call proceeds): always refused.
	byPidfd
)

// processCall is a system call that acts on another process by pid or
// group, which the launcher's filter refuses for any process but the
// caller.
type processCall struct {
	name   string
	nr     uint32
	target target
	// process, group and user are the values of argument 0 of a whichWho
	// call that make argument 1 a pid, a process group and a uid.
	process, group, user uint32
}

// processCalls returns every system call of the kernel's table that acts
// on another process by pid or group and is not left to another layer:
// signals (kill, tkill, tgkill, rt_sigqueueinfo, rt_tgsigqueueinfo,
// pidfd_send_signal) are Landlock's scope from ABI 6 on, ptrace is
// Landlock's from ABI 1 on and the bot's non-dumpable flag's, and the
// calls that only read another process's scheduling (getpriority,
// sched_get*, ioprio_get) show what ps shows. A call on a user (PRIO_USER,
// IOPRIO_WHO_USER) is refused even for 0: that is the caller's uid, the
// bot's. So is a call on a process group (PRIO_PGRP, IOPRIO_WHO_PGRP),
// its own included: a command may join any group of its session with
// setpgid, the bot's among them, and then act on it as its own.
func processCalls() []processCall {
	return []processCall{
		{name: "prlimit64", nr: unix.SYS_PRLIMIT64, target: pidArg0},
		{name: "setpriority", nr: unix.SYS_SETPRIORITY, target: whichWho, process: unix.PRIO_PROCESS, group: unix.PRIO_PGRP, user: unix.PRIO_USER},
		{name: "sched_setaffinity", nr: unix.SYS_SCHED_SETAFFINITY, target: pidArg0},
		{name: "sched_setparam", nr: unix.SYS_SCHED_SETPARAM, target: pidArg0},
		{name: "sched_setscheduler", nr: unix.SYS_SCHED_SETSCHEDULER, target: pidArg0},
		{name: "sched_setattr", nr: unix.SYS_SCHED_SETATTR, target: pidArg0},
		{name: "ioprio_set", nr: unix.SYS_IOPRIO_SET, target: whichWho, process: ioprioWhoProcess, group: ioprioWhoPgrp, user: ioprioWhoUser},
		{name: "process_vm_readv", nr: unix.SYS_PROCESS_VM_READV, target: pidArg0},
		{name: "process_vm_writev", nr: unix.SYS_PROCESS_VM_WRITEV, target: pidArg0},
		{name: "migrate_pages", nr: unix.SYS_MIGRATE_PAGES, target: pidArg0},
		{name: "move_pages", nr: unix.SYS_MOVE_PAGES, target: pidArg0},
		{name: "get_robust_list", nr: unix.SYS_GET_ROBUST_LIST, target: pidArg0},
		{name: "perf_event_open", nr: unix.SYS_PERF_EVENT_OPEN, target: pidArg1},
		{name: "kcmp", nr: unix.SYS_KCMP, target: twoPids},
		{name: "process_madvise", nr: unix.SYS_PROCESS_MADVISE, target: byPidfd},
		{name: "process_mrelease", nr: unix.SYS_PROCESS_MRELEASE, target: byPidfd},
		{name: "pidfd_getfd", nr: unix.SYS_PIDFD_GETFD, target: byPidfd},
	}
}

// The ioprio_set "which" values (linux/ioprio.h; not in x/sys).
const (
	ioprioWhoProcess = 1
	ioprioWhoPgrp    = 2
	ioprioWhoUser    = 3
)

// x32Bit marks an x32 system call on amd64: a filter that matched only
// the native numbers would let the x32 ones through.
const x32Bit = 0x40000000

// refusal is the filter's answer to what it refuses: EPERM, as the
// kernel's own permission checks answer.
const refusal = unix.SECCOMP_RET_ERRNO | uint32(unix.EPERM)

// nativeArch returns the audit architecture of the running binary, false
// where the filter is not written for it.
func nativeArch() (uint32, bool) {
	switch runtime.GOARCH {
	case "amd64":
		return unix.AUDIT_ARCH_X86_64, true
	case "arm64":
		return unix.AUDIT_ARCH_AARCH64, true
	}
	return 0, false
}

// filterOptions is what a launch's filter refuses besides the process
// calls.
type filterOptions struct {
	// notify sends a process call on a pid other than 0 to the
	// launcher's listener, which allows the caller's own; without it such
	// a call is refused.
	notify bool
	// egress refuses every socket but Unix, netlink and TCP ones (no UDP,
	// raw or packet socket: DNS cannot carry data out) and io_uring (whose
	// socket operation does not pass through socket(2)).
	egress bool
}

// buildFilter writes the launcher's seccomp filter. A call of another
// architecture (a 32-bit program, x32) is refused whole: its numbers are
// not the native ones the table names.
func buildFilter(o filterOptions) ([]unix.SockFilter, error) {
	arch, ok := nativeArch()
	if !ok {
		return nil, fmt.Errorf("seccomp filter: no filter for %s", runtime.GOARCH)
	}
	pending := uint32(refusal)
	if o.notify {
		pending = unix.SECCOMP_RET_USER_NOTIF
	}
	var p program
	p.load(offArch)
	p.jeq(arch, "", "refuse")
	p.load(offNr)
	p.jge(x32Bit, "refuse", "")
	calls := processCalls()
	for _, c := range calls {
		p.jeq(c.nr, c.name, "")
	}
	if o.egress {
		p.jeq(unix.SYS_SOCKET, "socket", "")
		p.jeq(unix.SYS_IO_URING_SETUP, "refuse", "")
	}
	p.ret(unix.SECCOMP_RET_ALLOW)
	// BPF jumps only forward: the blocks come after the dispatch, the
	// answers they jump to last.
	for _, c := range calls {
		p.label(c.name)
		switch c.target {
		case pidArg0, pidArg1:
			arg := 0
			if c.target == pidArg1 {
				arg = 1
			}
			p.load(argLow(arg))
			p.jeq(0, "allow", "pending")
		case whichWho:
			p.load(argLow(0))
			p.jeq(c.user, "refuse", "")
			p.jeq(c.group, "refuse", "")
			p.jeq(c.process, "", "allow")
			p.load(argLow(1))
			p.jeq(0, "allow", "pending")
		case twoPids:
			p.ret(pending)
		case byPidfd:
			p.ret(refusal)
		}
	}
	if o.egress {
		p.label("socket")
		p.load(argLow(0))
		p.jeq(unix.AF_UNIX, "allow", "")
		p.jeq(unix.AF_NETLINK, "allow", "")
		p.jeq(unix.AF_INET, "socket/inet", "")
		p.jeq(unix.AF_INET6, "socket/inet", "refuse")
		p.label("socket/inet")
		p.load(argLow(1))
		// The type's low bits; SOCK_NONBLOCK and SOCK_CLOEXEC are flags.
		p.and(0xf)
		p.jeq(unix.SOCK_STREAM, "", "refuse")
		p.load(argLow(2))
		p.jeq(0, "allow", "")
		p.jeq(unix.IPPROTO_TCP, "allow", "refuse")
	}
	p.label("allow")
	p.ret(unix.SECCOMP_RET_ALLOW)
	p.label("refuse")
	p.ret(refusal)
	p.label("pending")
	p.ret(pending)
	return p.assemble()
}

// installFilter sets the filter on the calling thread (and so on the
// processes it starts), which must have set no_new_privs. With listen it
// returns the listener's descriptor (close-on-exec), which must be
// answered (superviseProcessCalls); otherwise -1.
func installFilter(prog []unix.SockFilter, listen bool) (int, error) {
	fprog := unix.SockFprog{Len: uint16(len(prog)), Filter: &prog[0]}
	var flags uintptr
	if listen {
		flags = unix.SECCOMP_FILTER_FLAG_NEW_LISTENER
	}
	r, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_SET_MODE_FILTER, flags, uintptr(unsafe.Pointer(&fprog)))
	runtime.KeepAlive(prog)
	if errno != 0 {
		return -1, fmt.Errorf("seccomp(SECCOMP_SET_MODE_FILTER): %w", errno)
	}
	if !listen {
		return -1, nil
	}
	return int(r), nil
}

// filterThread sets the launcher's filter on the calling thread: the
// process calls answered by a listener this launcher serves where the
// kernel has one (Linux 5.5), refused outright on a pid other than 0
// where it has not. A kernel without seccomp filters (or a seccomp policy
// that refuses the call, as none of the common container profiles does)
// gets none, as a kernel without Landlock gets no ruleset: [Seccomp] says
// which, for the bot to report. A launch that must refuse sockets (egress)
// fails instead. The listener's descriptor goes to serve, which must see
// it answered (superviseProcessCalls).
func filterThread(egress bool, serve func(listener int)) error {
	if _, ok := nativeArch(); !ok {
		if egress {
			return fmt.Errorf("seccomp filter: no filter for %s, so the egress rules cannot be enforced", runtime.GOARCH)
		}
		return nil
	}
	prog, err := buildFilter(filterOptions{notify: true, egress: egress})
	if err != nil {
		return err
	}
	fd, err := installFilter(prog, true)
	if err == nil {
		serve(fd)
		return nil
	}
	if !errors.Is(err, unix.EINVAL) && !errors.Is(err, unix.ENOSYS) {
		return err
	}
	prog, err = buildFilter(filterOptions{egress: egress})
	if err != nil {
		return err
	}
	if _, err = installFilter(prog, false); err == nil || egress {
		return err
	}
	if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) {
		return nil
	}
	return err
}

// Seccomp reports what the launcher's filter does on this kernel: asked
// of the kernel (SECCOMP_GET_ACTION_AVAIL), without setting a filter.
func Seccomp() SeccompSupport {
	if _, ok := nativeArch(); !ok {
		return SeccompNone
	}
	avail := func(action uint32) bool {
		_, _, errno := unix.RawSyscall(unix.SYS_SECCOMP, unix.SECCOMP_GET_ACTION_AVAIL, 0, uintptr(unsafe.Pointer(&action)))
		return errno == 0
	}
	switch {
	case avail(unix.SECCOMP_RET_USER_NOTIF):
		return SeccompSupervised
	case avail(unix.SECCOMP_RET_ERRNO):
		return SeccompRefuse
	}
	return SeccompNone
}

package sandbox_test

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompProbeArg starts the test binary as the probe of one process call
// (the next argument names it; the one after is the other process's pid,
// which is also its group): it makes the call on 0, on itself and on the
// other process, harmlessly (a value read back, an empty request, an
// address that faults after the permission check), and prints
// "zero=<errno> self=<errno> other=<errno>", 0 for success.
const seccompProbeArg = "seccomp-probe"

// idleUID is a uid no process runs as.
const idleUID = 0x7ffffff0

// probeProcessCall runs the probe and returns its exit code.
func probeProcessCall(name string, other int) int {
	call, ok := processCallProbes(other)[name]
	if !ok {
		fmt.Fprintf(os.Stderr, "no probe for %s\n", name)
		return 2
	}
	self := os.Getpid()
	if call.group {
		self = unix.Getpgrp()
	}
	var out []string
	for _, t := range []struct {
		name string
		pid  int
	}{{"zero", 0}, {"self", self}, {"other", other}} {
		out = append(out, t.name+"="+strconv.Itoa(int(call.do(t.pid))))
	}
	fmt.Println(strings.Join(out, " "))
	return 0
}

// processCallProbe makes one process call on a pid (a group when group).
type processCallProbe struct {
	group bool
	do    func(pid int) unix.Errno
}

// raw makes a system call and returns its errno, closing a descriptor it
// returns.
func raw(nr uintptr, args ...uintptr) unix.Errno {
	var a [6]uintptr
	copy(a[:], args)
	r, _, errno := unix.Syscall6(nr, a[0], a[1], a[2], a[3], a[4], a[5])
	if errno == 0 && (nr == unix.SYS_PERF_EVENT_OPEN || nr == unix.SYS_PIDFD_GETFD) {
		_ = unix.Close(int(r))
	}
	return errno
}

// ptr passes a pointer as a system call argument.
func ptr[T any](p *T) uintptr { return uintptr(unsafe.Pointer(p)) }

// processCallProbes returns the probe of each process call the filter
// names; other is the other process, whose group one probe joins.
func processCallProbes(other int) map[string]processCallProbe {
	// The pidfd calls: on a pidfd of the pid (the caller's own for 0).
	viaPidfd := func(do func(fd int) unix.Errno) func(int) unix.Errno {
		return func(pid int) unix.Errno {
			if pid == 0 {
				pid = os.Getpid()
			}
			fd, err := unix.PidfdOpen(pid, 0)
			if err != nil {
				return err.(unix.Errno)
			}
			defer unix.Close(fd)
			return do(fd)
		}
	}
	var rlim unix.Rlimit
	var mask unix.CPUSet
	var param [1]int32
	var attr [14]uint32 // struct sched_attr, 56 bytes
	var buf [8]byte
	local := unix.Iovec{Base: &buf[0], Len: uint64(len(buf))}
	remote := unix.Iovec{Len: uint64(len(buf))} // address 0: faults
	return map[string]processCallProbe{
		"prlimit64": {do: func(pid int) unix.Errno {
			// A read: no new limit, the old one out.
			return raw(unix.SYS_PRLIMIT64, uintptr(pid), unix.RLIMIT_NOFILE, 0, ptr(&rlim))
		}},
		"setpriority": {do: func(pid int) unix.Errno {
			return setSame(unix.PRIO_PROCESS, pid)
		}},
		"setpriority/group": {group: true, do: func(pgid int) unix.Errno {
			return setSame(unix.PRIO_PGRP, pgid)
		}},
		"setpriority/joined-group": {group: true, do: func(int) unix.Errno {
			// The attack on a group: join the other process's group
			// (any group of the session may be joined), then act on
			// one's own group, 0.
			if err := unix.Setpgid(0, other); err != nil {
				return err.(unix.Errno)
			}
			return setSame(unix.PRIO_PGRP, 0)
		}},
		"setpriority/user": {do: func(int) unix.Errno {
			// A user's calls are refused whoever the user: one with no
			// process, so that an unfiltered call changes nothing.
			return raw(unix.SYS_SETPRIORITY, unix.PRIO_USER, idleUID, 19)
		}},
		"sched_setaffinity": {do: func(pid int) unix.Errno {
			if err := unix.SchedGetaffinity(pid, &mask); err != nil {
				return err.(unix.Errno)
			}
			return raw(unix.SYS_SCHED_SETAFFINITY, uintptr(pid), unsafe.Sizeof(mask), ptr(&mask))
		}},
		"sched_setparam": {do: func(pid int) unix.Errno {
			return raw(unix.SYS_SCHED_SETPARAM, uintptr(pid), ptr(&param))
		}},
		"sched_setscheduler": {do: func(pid int) unix.Errno {
			return raw(unix.SYS_SCHED_SETSCHEDULER, uintptr(pid), 0 /* SCHED_OTHER */, ptr(&param))
		}},
		"sched_setattr": {do: func(pid int) unix.Errno {
			if errno := raw(unix.SYS_SCHED_GETATTR, uintptr(pid), ptr(&attr), unsafe.Sizeof(attr), 0); errno != 0 {
				return errno
			}
			return raw(unix.SYS_SCHED_SETATTR, uintptr(pid), ptr(&attr), 0)
		}},
		"ioprio_set": {do: func(pid int) unix.Errno {
			return ioprioSame(1, pid)
		}},
		"ioprio_set/group": {group: true, do: func(pgid int) unix.Errno {
			return ioprioSame(2, pgid)
		}},
		"ioprio_set/user": {do: func(int) unix.Errno {
			return raw(unix.SYS_IOPRIO_SET, 3, idleUID, 0)
		}},
		"process_vm_readv": {do: func(pid int) unix.Errno {
			return raw(unix.SYS_PROCESS_VM_READV, uintptr(pid), ptr(&local), 1, ptr(&remote), 1, 0)
		}},
		"process_vm_writev": {do: func(pid int) unix.Errno {
			return raw(unix.SYS_PROCESS_VM_WRITEV, uintptr(pid), ptr(&local), 1, ptr(&remote), 1, 0)
		}},
		"migrate_pages": {do: func(pid int) unix.Errno {
			// No node to move from or to: nothing moves.
			return raw(unix.SYS_MIGRATE_PAGES, uintptr(pid), 0, 0, 0)
		}},
		"move_pages": {do: func(pid int) unix.Errno {
			// No page.
			return raw(unix.SYS_MOVE_PAGES, uintptr(pid), 0, 0, 0, 0, 0)
		}},
		"get_robust_list": {do: func(pid int) unix.Errno {
			var head, size uintptr
			return raw(unix.SYS_GET_ROBUST_LIST, uintptr(pid), ptr(&head), ptr(&size))
		}},
		"perf_event_open": {do: func(pid int) unix.Errno {
			a := unix.PerfEventAttr{Type: unix.PERF_TYPE_SOFTWARE, Config: unix.PERF_COUNT_SW_TASK_CLOCK, Bits: unix.PerfBitDisabled | unix.PerfBitExcludeKernel | unix.PerfBitExcludeHv}
			a.Size = uint32(unsafe.Sizeof(a))
			cpu := -1
			return raw(unix.SYS_PERF_EVENT_OPEN, ptr(&a), uintptr(pid), uintptr(cpu), uintptr(cpu), 0)
		}},
		"kcmp": {do: func(pid int) unix.Errno {
			return raw(unix.SYS_KCMP, uintptr(os.Getpid()), uintptr(pid), 0 /* KCMP_FILE */, 0, 0)
		}},
		"process_madvise": {do: viaPidfd(func(fd int) unix.Errno {
			// No range: nothing advised.
			return raw(unix.SYS_PROCESS_MADVISE, uintptr(fd), ptr(&local), 0, unix.MADV_COLD, 0)
		})},
		"process_mrelease": {do: viaPidfd(func(fd int) unix.Errno {
			// A live process: the kernel answers EINVAL.
			return raw(unix.SYS_PROCESS_MRELEASE, uintptr(fd), 0)
		})},
		"pidfd_getfd": {do: viaPidfd(func(fd int) unix.Errno {
			return raw(unix.SYS_PIDFD_GETFD, uintptr(fd), 0, 0)
		})},
	}
}

// setSame sets the priority of which/who to what it is.
func setSame(which, who int) unix.Errno {
	prio, err := unix.Getpriority(which, who)
	if err != nil {
		return err.(unix.Errno)
	}
	// The raw getpriority's 20-nice, which x/sys returns as is.
	return raw(unix.SYS_SETPRIORITY, uintptr(which), uintptr(who), uintptr(20-prio))
}

// ioprioSame sets the I/O priority of which/who to what it is.
func ioprioSame(which, who int) unix.Errno {
	r, _, errno := unix.Syscall(unix.SYS_IOPRIO_GET, uintptr(which), uintptr(who), 0)
	if errno != 0 {
		return errno
	}
	return raw(unix.SYS_IOPRIO_SET, uintptr(which), uintptr(who), r)
}

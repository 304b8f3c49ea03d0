// Package sandbox confines the processes the agent starts, and the bot's
// in-process file tools, to one view of the machine.
//
// A [Launcher] rewrites an [os/exec.Cmd] so that it starts the bot's own
// binary in a hidden launcher mode ([IsLaunch], [Launch]) instead of the
// command itself; the command's path, arguments, environment and working
// directory reach the launcher through an inherited file descriptor, never
// through its argv or environment. The launcher becomes a child subreaper
// and starts the command from a thread of its own that sets no_new_privs,
// applies a Landlock ruleset built from the [View] (best effort down to the
// kernel's ABI; from ABI 6 on, signals and abstract Unix sockets are scoped
// to the command's domain) and ends once the command runs, so no launcher
// thread is in the command's domain and the command cannot signal it. It
// forwards signals to the command, and when it exits kills every process
// that is left (orphans are re-parented to the launcher, so setsid and
// double forks do not escape), then exits as the command did. It dies with
// the bot (parent-death signal); what a launcher killed from outside leaves
// the bot ends with [ReapLeftovers]. Each launch is its own Landlock domain,
// so two spawns cannot read each other's /proc entries or signal each other.
//
// After the Landlock domain the confining thread sets a seccomp filter
// (classic BPF, written by hand) that refuses, with EPERM, every system
// call that acts on another process by pid or group and that Landlock does
// not scope: prlimit64, setpriority, sched_setaffinity, sched_setparam,
// sched_setscheduler, sched_setattr, ioprio_set, process_vm_readv,
// process_vm_writev, migrate_pages, move_pages, get_robust_list,
// perf_event_open and kcmp on any pid but 0 and the caller's own (its
// thread or its process); the same calls on a user (PRIO_USER,
// IOPRIO_WHO_USER: the bot's uid) or a process group (PRIO_PGRP,
// IOPRIO_WHO_PGRP: a command may join the bot's group with setpgid)
// whatever they name; and process_madvise, process_mrelease and
// pidfd_getfd, whose pidfd cannot be checked without a race, always. Agent processes run as the bot's uid,
// for which the kernel's own same-uid checks allow all of these: without
// the filter, prlimit --pid <bot> --cpu=1:1 kills the bot. A call with a
// pid other than 0 goes to the launcher (a seccomp listener), which lets
// it go on when the pid is the caller's. Signals are Landlock's (scoped
// from ABI 6), ptrace Landlock's and the bot's non-dumpable flag's. A
// program of another architecture (32-bit, x32) has all its calls
// refused. [Seccomp] says what the kernel allows of this.
//
// With [WithEgress], every command's network is confined to the egress
// proxy at the tier [DetectEgress] finds, which [Launcher.Egress] reports
// (never silently less: a kernel that offers none fails [NewLauncher]).
// At [EgressNamespace] (where unprivileged user namespaces work) the
// launcher starts the command through a stage of its own binary in new
// user and network namespaces (its uid and gid mapped to themselves):
// the stage brings lo up, listens on 127.0.0.1:<proxy port> there,
// confines itself as the launcher's thread would, hands that listener and
// its seccomp listener to the launcher and executes the command; the
// launcher passes each connection on to the proxy. lo is the namespace's
// only interface, so the proxy is the only way out. At [EgressLandlock]
// the Landlock domain handles TCP connect with one rule, the proxy's port.
// At both the seccomp filter refuses every socket but Unix, netlink and
// TCP ones (no UDP, so no DNS query carries data out, no raw or packet
// socket, no SCTP or MPTCP) and io_uring, whose socket operation does not
// pass through socket(2).
//
// With [WithWarm], the launcher keeps one launcher process started ahead:
// the Go runtime's start, the subreaper and the signal handlers done, it
// waits on a socket pair for its command. [Launcher.Start] hands it the
// command's descriptors and spec (SCM_RIGHTS); from there it is the same
// launcher, with a new domain for that command. A replacement is started
// once that launcher exits, off the path of the command the user waits
// for. Waiting, it holds nothing of the bot's (an empty environment, no
// spec) and is in no domain, so no agent process can signal, trace or
// read it.
//
// The file tools run inside the bot and cannot be confined by Landlock; they
// open files through [View.OpenFile], which resolves every path beneath a
// directory the view grants with openat2(RESOLVE_BENEATH |
// RESOLVE_NO_MAGICLINKS), so a symbolic link swapped between a check and the
// open cannot lead outside the view, and which refuses /proc/<pid>/... of
// every process, the bot's own included.
//
// The package is a leaf: it imports the standard library,
// golang.org/x/sys/unix and github.com/landlock-lsm/go-landlock only.
package sandbox

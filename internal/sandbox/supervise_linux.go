//go:build linux

package sandbox

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"unsafe"

	"golang.org/x/sys/unix"
)

// seccompNotif is struct seccomp_notif (linux/seccomp.h; not in x/sys).
type seccompNotif struct {
	id    uint64
	pid   uint32
	flags uint32
	nr    int32
	arch  uint32
	ip    uint64
	args  [6]uint64
}

// seccompNotifResp is struct seccomp_notif_resp.
type seccompNotifResp struct {
	id    uint64
	val   int64
	error int32
	flags uint32
}

// caller is the process a pending call came from.
type caller struct {
	// tid is the calling thread, tgid its process.
	tid, tgid int32
}

// superviseProcessCalls answers the process calls the filter on fd sends
// to the launcher, until the listener fails (the launcher exits with the
// command's tree). A call goes on when it names the caller itself (its
// thread or its process), and is refused with EPERM otherwise. It runs on a thread of the launcher outside the
// command's domain and filter.
//
// It waits in the runtime's poller, not in a blocking ioctl: a goroutine
// blocked in a system call holds the launcher's one P until the runtime's
// monitor takes it back (up to 10 ms when idle), which the command's start
// would wait for.
func superviseProcessCalls(fd int) {
	calls := map[int32]processCall{}
	for _, c := range processCalls() {
		calls[int32(c.nr)] = c
	}
	if err := unix.SetNonblock(fd, true); err != nil {
		_ = unix.Close(fd)
		return
	}
	listener := os.NewFile(uintptr(fd), "seccomp-listener")
	defer listener.Close()
	conn, err := listener.SyscallConn()
	if err != nil {
		return
	}
	for {
		var n seccompNotif
		var rerr error
		err := conn.Read(func(fd uintptr) bool {
			ready := []unix.PollFd{{Fd: int32(fd), Events: unix.POLLIN}}
			if k, err := unix.Poll(ready, 0); err != nil || k == 0 {
				return false
			}
			if ready[0].Revents&unix.POLLIN == 0 {
				// POLLHUP: every process under the filter is gone.
				rerr = unix.EBADF
				return true
			}
			rerr = notifIoctl(int(fd), unix.SECCOMP_IOCTL_NOTIF_RECV, unsafe.Pointer(&n))
			return true
		})
		if err == nil {
			err = rerr
		}
		if err != nil {
			// ENOENT: the caller died (or was interrupted) before its
			// call could be read.
			if errors.Is(err, unix.EINTR) || errors.Is(err, unix.ENOENT) {
				continue
			}
			return
		}
		resp := seccompNotifResp{id: n.id, error: -int32(unix.EPERM)}
		c, ok := calls[n.nr]
		if who, err := callerOf(int32(n.pid)); ok && err == nil && c.allows(n.args, who) && notifValid(fd, n.id) {
			resp.error, resp.flags = 0, unix.SECCOMP_USER_NOTIF_FLAG_CONTINUE
		}
		err = notifIoctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
		if errors.Is(err, unix.EINVAL) && resp.flags != 0 {
			// A kernel before 5.5 cannot let the call go on: refused.
			resp.error, resp.flags = -int32(unix.EPERM), 0
			_ = notifIoctl(fd, unix.SECCOMP_IOCTL_NOTIF_SEND, unsafe.Pointer(&resp))
		}
	}
}

// allows reports whether the call with args, from who, acts on who alone.
// The pids are the arguments' low 32 bits, as the kernel reads an int.
func (c processCall) allows(args [6]uint64, who caller) bool {
	self := func(pid int32) bool { return pid == 0 || pid == who.tid || pid == who.tgid }
	switch c.target {
	case pidArg0:
		return self(int32(args[0]))
	case pidArg1:
		return self(int32(args[1]))
	case twoPids:
		return self(int32(args[0])) && self(int32(args[1]))
	case whichWho:
		which, id := uint32(args[0]), int32(args[1])
		switch which {
		case c.user, c.group:
			return false
		case c.process:
			return self(id)
		}
		// The kernel refuses any other value (EINVAL).
		return true
	}
	return false
}

// callerOf returns the process of the thread tid (a pid in the
// launcher's pid namespace, which is the command's). Only the caller's own
// thread and process count as itself: both stay alive while the call
// waits, so their pids cannot be reused by another process before it goes
// on (a sibling thread's could).
func callerOf(tid int32) (caller, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(int(tid)) + "/status")
	if err != nil {
		return caller{}, err
	}
	who := caller{tid: tid}
	for line := range strings.Lines(string(data)) {
		if v, ok := strings.CutPrefix(line, "Tgid:"); ok {
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				return caller{}, err
			}
			who.tgid = int32(n)
			break
		}
	}
	if who.tgid == 0 {
		return caller{}, errors.New("no Tgid in the caller's status")
	}
	return who, nil
}

// notifValid reports whether the notification id still waits: its caller
// is the same thread callerOf read (a pid is reused only after its call
// is gone).
func notifValid(fd int, id uint64) bool {
	return notifIoctl(fd, unix.SECCOMP_IOCTL_NOTIF_ID_VALID, unsafe.Pointer(&id)) == nil
}

// notifIoctl is ioctl(fd, req, arg) that may block (Syscall, not
// RawSyscall: the runtime hands the thread's other goroutines on).
func notifIoctl(fd int, req uint, arg unsafe.Pointer) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if errno != 0 {
		return errno
	}
	return nil
}

//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// netnsArg is the launcher's argument for its network namespace stage:
// argv [executable, LaunchArg, netnsArg, <socket fd>, <spec fd>]. The
// stage is started, unconfined, in the command's new user and network
// namespaces, as the command's pid, with the command's descriptors and
// directory and the launcher's environment: it brings lo up and listens on
// 127.0.0.1:<proxy port> there, confines its thread for the spec (the
// Landlock domain cannot be the launcher's: the launcher writes the
// stage's uid_map under /proc, which the view keeps read-only), hands the
// listener and the seccomp listener to the launcher over the socket,
// drops the one capability it had and executes the command.
const netnsArg = "netns"

// netnsProbeArg is the stage's dry run ([DetectEgress]): a launcher
// process started as any other, which starts the stage's dry run
// (netnsInner) as it would start a stage: lo up and a listener, exit code
// 0 when both worked. The bot cannot start the stage itself: it is not
// dumpable, and neither is what it forks, whose /proc/<pid>/uid_map it
// could then not write.
const netnsProbeArg = "netns-probe"

// netnsInner is the last argument of the stage's dry run proper.
const netnsInner = "inner"

// isNetnsStage reports whether args start the namespace stage or its dry
// run.
func isNetnsStage(args []string) bool {
	return len(args) >= 3 && args[1] == LaunchArg &&
		(args[2] == netnsProbeArg && (len(args) == 3 || len(args) == 4 && args[3] == netnsInner) || args[2] == netnsArg && len(args) == 5)
}

// netnsAttr returns the clone attributes of the stage: new user and
// network namespaces, the caller's own uid and gid mapped to themselves
// (the command sees its usual ids; there is no root inside), and
// CAP_NET_ADMIN as an ambient capability, which survives the stage's exec
// and which the stage drops before the command's.
func netnsAttr(sys *syscall.SysProcAttr) *syscall.SysProcAttr {
	attr := *sys
	attr.Cloneflags |= unix.CLONE_NEWUSER | unix.CLONE_NEWNET
	attr.UidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getuid(), HostID: os.Getuid(), Size: 1}}
	attr.GidMappings = []syscall.SysProcIDMap{{ContainerID: os.Getgid(), HostID: os.Getgid(), Size: 1}}
	attr.GidMappingsEnableSetgroups = false
	attr.AmbientCaps = []uintptr{unix.CAP_NET_ADMIN}
	return &attr
}

// startInNamespace starts s's command through the namespace stage with
// files as its descriptors, in its own process group when setpgid, and
// returns its pid and what bridges the namespace to the proxy and answers
// the stage's seccomp listener once the stage hands them over. The
// calling thread is not confined: the stage confines itself.
func startInNamespace(s spec, files []int, setpgid bool) (int, func(), error) {
	exe, err := os.Executable()
	if err != nil {
		return 0, nil, fmt.Errorf("the network namespace stage: %w", err)
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return 0, nil, fmt.Errorf("the network namespace's socket: %w", err)
	}
	defer unix.Close(pair[1])
	specCopy, err := specFile(s)
	if err != nil {
		unix.Close(pair[0])
		return 0, nil, fmt.Errorf("the network namespace stage's spec: %w", err)
	}
	defer specCopy.Close()
	childFiles := make([]uintptr, 0, len(files)+2)
	for _, fd := range files {
		childFiles = append(childFiles, uintptr(fd))
	}
	sock, specFD := len(childFiles), len(childFiles)+1
	childFiles = append(childFiles, uintptr(pair[1]), specCopy.Fd())
	pid, err := forkDumpable(exe, []string{exe, LaunchArg, netnsArg, strconv.Itoa(sock), strconv.Itoa(specFD)}, &syscall.ProcAttr{
		Dir: s.Dir,
		// The launcher's own: the command's (a GODEBUG, an
		// LD_PRELOAD for a binary built with cgo) is for the command,
		// which the stage starts with it from the spec once confined.
		Env:   launcherEnv(),
		Files: childFiles,
		Sys:   netnsAttr(&syscall.SysProcAttr{Setpgid: setpgid}),
	})
	if err != nil {
		unix.Close(pair[0])
		return 0, nil, fmt.Errorf("start %s in a network namespace: %w", s.Path, err)
	}
	return pid, func() { go bridgeNamespace(pair[0], s.Egress.ProxyPort) }, nil
}

// forkDumpable is syscall.ForkExec with the launcher dumpable while it
// forks: the child's /proc/<pid> entries, whose uid_map and gid_map the
// launcher writes before the child executes, belong to root while it is
// not. The launcher is outside every Landlock domain, which no sandboxed
// process may trace or read, and is not dumpable again once the child
// runs.
func forkDumpable(path string, args []string, attr *syscall.ProcAttr) (int, error) {
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	defer unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	return syscall.ForkExec(path, args, attr)
}

// bridgeNamespace takes what the stage sends on sock: the listener on
// the namespace's lo, and the seccomp listener, which it answers
// (superviseProcessCalls); for each connection a process of the namespace
// makes to the listener, it connects to the egress proxy on the
// launcher's loopback and copies both ways, until the launcher exits. It
// runs on the launcher's own threads, outside the command's namespaces,
// domain and filter.
func bridgeNamespace(sock int, port uint16) {
	fds, err := receiveFDs(sock)
	unix.Close(sock)
	if err != nil || len(fds) == 0 {
		// The stage failed before the hand-over, and says so on the
		// command's stderr.
		for _, fd := range fds {
			unix.Close(fd)
		}
		return
	}
	for _, fd := range fds[1:] {
		go superviseProcessCalls(fd)
	}
	f := os.NewFile(uintptr(fds[0]), "netns-listener")
	ln, err := net.FileListener(f)
	f.Close()
	if err != nil {
		return
	}
	proxy := net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port)))
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		go splice(c, proxy)
	}
}

// splice copies between c and a new connection to proxy until both
// directions end.
func splice(c net.Conn, proxy string) {
	defer c.Close()
	up, err := net.Dial("tcp", proxy)
	if err != nil {
		return
	}
	defer up.Close()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, _ = io.Copy(up, c)
		_ = up.(*net.TCPConn).CloseWrite()
	}()
	_, _ = io.Copy(c, up)
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.CloseWrite()
	}
	wg.Wait()
}

// receiveFDs reads the descriptors the stage sends on sock, in one
// message: none when it ends first.
func receiveFDs(sock int) ([]int, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(2*4))
	for {
		_, oobn, _, _, err := unix.Recvmsg(sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return nil, err
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, err
		}
		var fds []int
		for i := range msgs {
			got, err := unix.ParseUnixRights(&msgs[i])
			if err != nil {
				return fds, err
			}
			fds = append(fds, got...)
		}
		return fds, nil
	}
}

// netnsStage is the namespace stage (see netnsArg), or its dry run; it
// returns only when it fails.
func netnsStage(args []string, stderr io.Writer) int {
	fail := func(err error) int {
		fmt.Fprintf(stderr, "agent sandbox: network namespace: %v\n", err)
		return exitNotStarted
	}
	if args[2] == netnsProbeArg && len(args) == 4 {
		ln, err := listenInNamespace(0)
		if err != nil {
			return fail(err)
		}
		unix.Close(ln)
		return 0
	}
	if args[2] == netnsProbeArg {
		exe, err := os.Executable()
		if err != nil {
			return fail(err)
		}
		pid, err := forkDumpable(exe, []string{exe, LaunchArg, netnsProbeArg, netnsInner}, &syscall.ProcAttr{
			Env:   launcherEnv(),
			Files: []uintptr{0, 1, 2},
			Sys:   netnsAttr(&syscall.SysProcAttr{}),
		})
		if err != nil {
			return fail(fmt.Errorf("a new user and network namespace: %w", err))
		}
		status, err := waitFor(pid)
		if err != nil {
			return fail(err)
		}
		return exitAs(status)
	}
	sock, err := strconv.Atoi(args[3])
	if err != nil {
		return fail(fmt.Errorf("bad descriptor %q", args[3]))
	}
	specFD, err := strconv.Atoi(args[4])
	if err != nil || specFD != sock+1 {
		return fail(fmt.Errorf("bad descriptor %q", args[4]))
	}
	s, err := readSpecFD(specFD, sock-3)
	if err != nil {
		return fail(err)
	}
	if s.Egress == nil {
		return fail(errors.New("the spec has no egress proxy"))
	}
	unix.CloseOnExec(sock)
	ln, err := listenInNamespace(s.Egress.ProxyPort)
	if err != nil {
		return fail(err)
	}
	send := []int{ln}
	if err := confineThread(s, func(listener int) { send = append(send, listener) }); err != nil {
		return fail(err)
	}
	if err := unix.Sendmsg(sock, []byte{0}, unix.UnixRights(send...), nil, 0); err != nil {
		return fail(fmt.Errorf("hand the listeners over: %w", err))
	}
	for _, fd := range send {
		unix.Close(fd)
	}
	unix.Close(sock)
	if err := dropCapabilities(); err != nil {
		return fail(err)
	}
	err = syscall.Exec(s.Path, s.Args, withTempDir(s.Env, s.View.Temp))
	return fail(fmt.Errorf("start %s: %w", s.Path, err))
}

// listenInNamespace brings the namespace's lo up and listens on
// 127.0.0.1:port in it (close-on-exec). It needs CAP_NET_ADMIN in the
// namespace.
func listenInNamespace(port uint16) (int, error) {
	// Any socket carries the interface ioctls; a Unix one is what the
	// egress filter allows.
	s, err := unix.Socket(unix.AF_UNIX, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	defer unix.Close(s)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return -1, err
	}
	if err := unix.IoctlIfreq(s, unix.SIOCGIFFLAGS, ifr); err != nil {
		return -1, fmt.Errorf("lo's flags: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(s, unix.SIOCSIFFLAGS, ifr); err != nil {
		return -1, fmt.Errorf("bring lo up: %w", err)
	}
	ln, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	if err := unix.Bind(ln, &unix.SockaddrInet4{Port: int(port), Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		unix.Close(ln)
		return -1, fmt.Errorf("bind 127.0.0.1:%d: %w", port, err)
	}
	if err := unix.Listen(ln, 128); err != nil {
		unix.Close(ln)
		return -1, fmt.Errorf("listen: %w", err)
	}
	return ln, nil
}

// dropCapabilities drops the stage's capability (ambient, effective,
// permitted, inheritable) so that the command has none.
func dropCapabilities() error {
	if err := unix.Prctl(unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0); err != nil {
		return fmt.Errorf("clear the ambient capabilities: %w", err)
	}
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capset(&hdr, &data[0]); err != nil {
		return fmt.Errorf("drop the capabilities: %w", err)
	}
	return nil
}

// probeNamespace runs the stage's dry run of executable with the
// attributes a command would get: it reports why the namespace tier
// cannot work here (user namespaces refused, as by Docker's default
// seccomp profile, or capabilities refused inside them, as by Ubuntu's
// AppArmor policy), nil when it can.
func probeNamespace(executable string) error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		w.Close()
		return err
	}
	defer null.Close()
	pid, err := syscall.ForkExec(executable, []string{executable, LaunchArg, netnsProbeArg}, &syscall.ProcAttr{
		Env:   launcherEnv(),
		Files: []uintptr{null.Fd(), w.Fd(), w.Fd()},
		Sys:   &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL},
	})
	w.Close()
	if err != nil {
		return fmt.Errorf("start %s: %w", executable, err)
	}
	msg, _ := io.ReadAll(io.LimitReader(r, 4096))
	var status unix.WaitStatus
	for {
		_, err = unix.Wait4(pid, &status, 0, nil)
		if !errors.Is(err, unix.EINTR) {
			break
		}
	}
	if err != nil {
		return err
	}
	if !status.Exited() || status.ExitStatus() != 0 {
		return fmt.Errorf("the network namespace stage failed: %s", bytes.TrimSpace(msg))
	}
	return nil
}

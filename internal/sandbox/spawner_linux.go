//go:build linux

package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// spawnerArg starts the spawner ([StartSpawner]): argv [executable,
// LaunchArg, spawnerArg], its descriptor 3 a socket to the bot, its ids in
// spawnerEnv. It narrows its capabilities and re-executes itself as
// spawnerServeArg, which serves the bot.
const (
	spawnerArg      = "spawner"
	spawnerServeArg = "spawner-serve"
)

// agentArg starts a launcher as the agent's ids (the spawner starts it):
// argv [executable, LaunchArg, agentArg], its descriptor 3 a socket to the
// launcher that relays its command (see relay).
const agentArg = "agent"

// spawnerEnv is the variable that tells the spawner the agent's ids and the
// bot's pid: "uid:gid:pid".
const spawnerEnv = "AGENT_SANDBOX_SPAWNER"

// spawnerSocket is the spawner's descriptor of its socket to the bot.
const spawnerSocket = 3

// The capabilities the spawner keeps, and the one it needs to narrow its
// bounding set (golang.org/x/sys/unix names them).
const (
	capSetgid  = unix.CAP_SETGID
	capSetuid  = unix.CAP_SETUID
	capSetpcap = unix.CAP_SETPCAP
)

// Spawner is the one process that may start processes as the agent's ids:
// the bot's child, started by [StartSpawner] before the bot gives up its
// own privileges, that keeps only CAP_SETUID and CAP_SETGID (its bounding
// set narrowed to those two where it may), takes requests only from the
// bot's pid over its socket pair, and only ever starts this binary's
// launcher, as the ids it was started with. A [Launcher] given it with
// [WithSpawner] runs every command through such a launcher. It ends when
// the bot closes its socket (Close, or the bot's death). It is safe for
// concurrent use.
type Spawner struct {
	agent IDs
	// mu keeps one request at a time on conn.
	mu   sync.Mutex
	conn *os.File
	proc *os.Process
	done chan struct{}
}

// StartSpawner starts the spawner from executable (this binary, whose main
// calls [Launch] when [IsLaunch] says so), as runAs, with agent the ids it
// starts launchers as. The caller must be root, or hold CAP_SETUID and
// CAP_SETGID in its permitted set (the spawner gets them as ambient
// capabilities); it gives up its own privileges afterwards. It returns
// once the spawner has narrowed its capabilities and is ready.
func StartSpawner(executable string, runAs, agent IDs) (*Spawner, error) {
	if agent.UID <= 0 || agent.GID <= 0 || runAs.UID <= 0 || runAs.GID <= 0 {
		return nil, fmt.Errorf("sandbox: the spawner as %s for the agent's %s: neither may be root's", runAs, agent)
	}
	if agent.UID == runAs.UID {
		return nil, fmt.Errorf("sandbox: the agent's uid %d is the bot's", agent.UID)
	}
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: socketpair: %w", err)
	}
	conn := os.NewFile(uintptr(pair[0]), "agent-sandbox-spawner")
	theirs := os.NewFile(uintptr(pair[1]), "agent-sandbox-spawner")
	defer theirs.Close()
	caps := []uintptr{capSetuid, capSetgid}
	if held(capSetpcap) {
		caps = append(caps, capSetpcap)
	}
	cmd := &exec.Cmd{
		Path:       executable,
		Args:       []string{executable, LaunchArg, spawnerArg},
		Env:        []string{"GOMAXPROCS=1", spawnerEnv + "=" + agent.String() + ":" + strconv.Itoa(os.Getpid())},
		ExtraFiles: []*os.File{theirs},
		SysProcAttr: &syscall.SysProcAttr{
			Credential:  &syscall.Credential{Uid: uint32(runAs.UID), Gid: uint32(runAs.GID), Groups: []uint32{}},
			AmbientCaps: caps,
		},
	}
	if err := cmd.Start(); err != nil {
		conn.Close()
		return nil, fmt.Errorf("sandbox: start the spawner: %w", err)
	}
	s := &Spawner{agent: agent, conn: conn, proc: cmd.Process, done: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(s.done) }()
	buf := make([]byte, 512)
	n, err := unix.Read(int(conn.Fd()), buf)
	if err != nil || n <= 0 || buf[0] != 'r' {
		s.Close()
		msg := "it ended"
		if n > 1 && buf[0] == 'n' {
			msg = string(buf[1:n])
		}
		return nil, fmt.Errorf("sandbox: the spawner is not ready: %s", msg)
	}
	return s, nil
}

// held reports whether the calling thread has capability c in its
// permitted set: what an ambient capability of a child needs (os/exec adds
// it to the inheritable set itself).
func held(c int) bool {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	var data [2]unix.CapUserData
	if err := unix.Capget(&hdr, &data[0]); err != nil {
		return false
	}
	bit := uint32(1) << (c % 32)
	d := data[c/32]
	return d.Permitted&bit != 0
}

// Agent returns the ids the spawner starts launchers as.
func (s *Spawner) Agent() IDs { return s.agent }

// Pid returns the spawner's pid.
func (s *Spawner) Pid() int { return s.proc.Pid }

// Close ends the spawner (it exits when its socket closes) and waits for
// it.
func (s *Spawner) Close() error {
	s.conn.Close()
	<-s.done
	return nil
}

// agentLauncher asks the spawner for a launcher running as the agent's
// ids, and returns the bot's end of the socket to it: the file a relaying
// launcher hands its command through.
func (s *Spawner) agentLauncher() (*os.File, error) {
	return s.request(s.agent)
}

// request asks the spawner for a launcher running as ids.
func (s *Spawner) request(ids IDs) (*os.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return askSpawner(int(s.conn.Fd()), ids)
}

// askSpawner asks the spawner at the other end of conn for a launcher
// running as ids, and returns the socket to it.
func askSpawner(conn int, ids IDs) (*os.File, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: socketpair: %w", err)
	}
	mine, theirs := pair[0], pair[1]
	defer unix.Close(theirs)
	msg := make([]byte, 9)
	msg[0] = 'l'
	binary.LittleEndian.PutUint32(msg[1:], uint32(ids.UID))
	binary.LittleEndian.PutUint32(msg[5:], uint32(ids.GID))
	if err := unix.Sendmsg(conn, msg, unix.UnixRights(theirs), nil, 0); err != nil {
		unix.Close(mine)
		return nil, fmt.Errorf("sandbox: ask the spawner: %w", err)
	}
	buf := make([]byte, 512)
	n, err := unix.Read(conn, buf)
	for errors.Is(err, unix.EINTR) {
		n, err = unix.Read(conn, buf)
	}
	if err != nil || n <= 0 {
		unix.Close(mine)
		return nil, fmt.Errorf("sandbox: the spawner did not answer: %v", err)
	}
	if buf[0] != 'y' {
		unix.Close(mine)
		return nil, fmt.Errorf("sandbox: the spawner refused: %s", buf[1:n])
	}
	return os.NewFile(uintptr(mine), "agent-sandbox-agent"), nil
}

// spawnerConfig reads spawnerEnv: the agent's ids and the bot's pid.
func spawnerConfig() (IDs, int, error) {
	f := strings.Split(os.Getenv(spawnerEnv), ":")
	if len(f) != 3 {
		return IDs{}, 0, fmt.Errorf("%s is not uid:gid:pid", spawnerEnv)
	}
	var n [3]int
	for i, s := range f {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			return IDs{}, 0, fmt.Errorf("%s is not uid:gid:pid", spawnerEnv)
		}
		n[i] = v
	}
	return IDs{UID: n[0], GID: n[1]}, n[2], nil
}

// launchSpawner is the spawner's first stage. On its own thread (the main
// one, locked by Launch) it narrows the bounding set to CAP_SETUID and
// CAP_SETGID where it holds CAP_SETPCAP, keeps those two alone in its
// other sets (ambient too, so that they survive the exec), and
// re-executes itself from this thread: every thread of the new image then
// has exactly these capabilities. Capabilities are per thread, and
// changing them on all of Go's threads needs AllThreadsSyscall, which a
// binary built with cgo does not have.
func launchSpawner(stderr io.Writer) int {
	fail := func(err error) int {
		_, _ = unix.Write(spawnerSocket, []byte("n"+err.Error()))
		fmt.Fprintf(stderr, "agent sandbox spawner: %v\n", err)
		return exitNotStarted
	}
	if _, _, err := spawnerConfig(); err != nil {
		return fail(err)
	}
	if err := narrowCaps(); err != nil {
		return fail(err)
	}
	exe, err := os.Executable()
	if err != nil {
		return fail(err)
	}
	err = syscall.Exec(exe, []string{os.Args[0], LaunchArg, spawnerServeArg}, os.Environ())
	return fail(fmt.Errorf("re-execute: %w", err))
}

// narrowCaps narrows the calling thread's capabilities to CAP_SETUID and
// CAP_SETGID: bounding set (with CAP_SETPCAP), then permitted, effective,
// inheritable and ambient.
func narrowCaps() error {
	keep := func(c int) bool { return c == capSetuid || c == capSetgid }
	if held(capSetpcap) {
		last, err := lastCap()
		if err != nil {
			return err
		}
		for c := 0; c <= last; c++ {
			if keep(c) || c == capSetpcap {
				continue
			}
			if _, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, uintptr(c), 0, 0, 0, 0); e != 0 {
				return fmt.Errorf("drop capability %d from the bounding set: %w", c, e)
			}
		}
		if _, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_CAPBSET_DROP, capSetpcap, 0, 0, 0, 0); e != 0 {
			return fmt.Errorf("drop CAP_SETPCAP from the bounding set: %w", e)
		}
	}
	mask := uint32(1)<<capSetuid | uint32(1)<<capSetgid
	if err := setCaps(mask, mask, mask); err != nil {
		return err
	}
	if _, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); e != 0 {
		return fmt.Errorf("clear the ambient capabilities: %w", e)
	}
	for _, c := range []int{capSetuid, capSetgid} {
		if _, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_RAISE, uintptr(c), 0, 0, 0); e != 0 {
			return fmt.Errorf("raise ambient capability %d: %w", c, e)
		}
	}
	return nil
}

// setCaps sets the calling thread's capability sets (the first 32
// capabilities; the spawner holds none above them) with a raw capset,
// which changes this thread alone.
func setCaps(permitted, effective, inheritable uint32) error {
	hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
	data := [2]unix.CapUserData{{Permitted: permitted, Effective: effective, Inheritable: inheritable}}
	_, _, e := unix.RawSyscall(unix.SYS_CAPSET, uintptr(unsafe.Pointer(&hdr)), uintptr(unsafe.Pointer(&data[0])), 0)
	if e != 0 {
		return fmt.Errorf("capset: %w", e)
	}
	return nil
}

// lastCap returns the highest capability the kernel knows.
func lastCap() (int, error) {
	data, err := os.ReadFile("/proc/sys/kernel/cap_last_cap")
	if err != nil {
		return 0, fmt.Errorf("read the last capability: %w", err)
	}
	return strconv.Atoi(strings.TrimSpace(string(data)))
}

// serveSpawner is the spawner: it checks that it holds CAP_SETUID and
// CAP_SETGID and nothing else, drops them from its inheritable and ambient
// sets on the one thread that will fork, says it is ready and serves the
// bot until the bot closes the socket. Every request is one message from
// the bot's pid (SCM_CREDENTIALS, which the kernel fills in) that asks for
// a launcher as the configured ids and carries the launcher's socket; the
// answer is "y" and the launcher's pid, or "n" and why not.
func serveSpawner(stderr io.Writer) int {
	fail := func(err error) int {
		_, _ = unix.Write(spawnerSocket, []byte("n"+err.Error()))
		fmt.Fprintf(stderr, "agent sandbox spawner: %v\n", err)
		return exitNotStarted
	}
	agent, bot, err := spawnerConfig()
	if err != nil {
		return fail(err)
	}
	if os.Getuid() == 0 || os.Getuid() == agent.UID {
		return fail(fmt.Errorf("the spawner runs as uid %d", os.Getuid()))
	}
	if os.Getppid() != bot {
		return fail(fmt.Errorf("the parent is %d, not the bot (%d)", os.Getppid(), bot))
	}
	mask := uint32(1)<<capSetuid | uint32(1)<<capSetgid
	// Launch keeps this goroutine on the main thread: the launchers are
	// forked from it, and only its sets are cleared here.
	if _, _, e := unix.RawSyscall6(unix.SYS_PRCTL, unix.PR_CAP_AMBIENT, unix.PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0, 0); e != 0 {
		return fail(fmt.Errorf("clear the ambient capabilities: %w", e))
	}
	if err := setCaps(mask, mask, 0); err != nil {
		return fail(err)
	}
	if err := checkCaps(mask); err != nil {
		return fail(err)
	}
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	if err := unix.SetsockoptInt(spawnerSocket, unix.SOL_SOCKET, unix.SO_PASSCRED, 1); err != nil {
		return fail(fmt.Errorf("SO_PASSCRED: %w", err))
	}
	unix.CloseOnExec(spawnerSocket)
	exe, err := os.Executable()
	if err != nil {
		return fail(err)
	}
	if _, err := unix.Write(spawnerSocket, []byte{'r'}); err != nil {
		return exitNotStarted
	}
	for {
		sock, ids, pid, err := readRequest(spawnerSocket)
		if errors.Is(err, io.EOF) {
			return 0
		}
		if err == nil && pid != bot {
			err = fmt.Errorf("a request from pid %d, not the bot", pid)
		}
		if err == nil && ids != agent {
			err = fmt.Errorf("a launcher as %s asked for; this spawner starts them as %s only", ids, agent)
		}
		if err != nil {
			if sock >= 0 {
				unix.Close(sock)
			}
			_, _ = unix.Write(spawnerSocket, []byte("n"+err.Error()))
			continue
		}
		started, err := startAgent(exe, agent, sock)
		if err != nil {
			_, _ = unix.Write(spawnerSocket, []byte("n"+err.Error()))
			continue
		}
		reply := make([]byte, 5)
		reply[0] = 'y'
		binary.LittleEndian.PutUint32(reply[1:], uint32(started))
		_, _ = unix.Write(spawnerSocket, reply)
	}
}

// checkCaps fails unless the process's permitted and effective sets are
// exactly mask, and its inheritable and ambient sets empty (from the main
// thread's /proc status).
func checkCaps(mask uint32) error {
	got, err := procCaps()
	if err != nil {
		return err
	}
	want := map[string]uint64{"CapPrm": uint64(mask), "CapEff": uint64(mask), "CapInh": 0, "CapAmb": 0}
	for k, v := range want {
		if got[k] != v {
			return fmt.Errorf("%s is %#x, want %#x", k, got[k], v)
		}
	}
	return nil
}

// procCaps returns the capability sets of /proc/thread-self/status.
func procCaps() (map[string]uint64, error) {
	data, err := os.ReadFile("/proc/thread-self/status")
	if err != nil {
		return nil, fmt.Errorf("read the capabilities: %w", err)
	}
	out := map[string]uint64{}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok || !strings.HasPrefix(k, "Cap") {
			continue
		}
		n, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
		if err != nil {
			return nil, fmt.Errorf("capabilities %s: %w", k, err)
		}
		out[k] = n
	}
	return out, nil
}

// readRequest reads one request: the socket it carries (-1 without one),
// the ids it asks for and the sender's pid. io.EOF means the bot closed
// the socket.
func readRequest(sock int) (int, IDs, int, error) {
	buf := make([]byte, 16)
	oob := make([]byte, unix.CmsgSpace(unix.SizeofUcred)+unix.CmsgSpace(4*4))
	for {
		n, oobn, flags, _, err := unix.Recvmsg(sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return -1, IDs{}, 0, fmt.Errorf("read a request: %w", err)
		}
		if n == 0 && oobn == 0 {
			return -1, IDs{}, 0, io.EOF
		}
		fd, pid := -1, 0
		var fds []int
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return -1, IDs{}, 0, fmt.Errorf("read a request: %w", err)
		}
		for i := range msgs {
			if got, err := unix.ParseUnixRights(&msgs[i]); err == nil {
				fds = append(fds, got...)
			} else if cred, err := unix.ParseUnixCredentials(&msgs[i]); err == nil {
				pid = int(cred.Pid)
			}
		}
		if len(fds) > 0 {
			fd = fds[0]
			for _, extra := range fds[1:] {
				unix.Close(extra)
			}
		}
		switch {
		case flags&(unix.MSG_CTRUNC|unix.MSG_TRUNC) != 0 || n != 9 || buf[0] != 'l':
			return fd, IDs{}, pid, errors.New("a malformed request")
		case len(fds) != 1:
			return fd, IDs{}, pid, fmt.Errorf("a request with %d descriptors, not 1", len(fds))
		}
		ids := IDs{UID: int(binary.LittleEndian.Uint32(buf[1:])), GID: int(binary.LittleEndian.Uint32(buf[5:]))}
		return fd, ids, pid, nil
	}
}

// startAgent starts this binary's launcher as ids, in a process group of
// its own, its descriptor 3 sock (which it closes), and returns its pid. A
// goroutine waits for it.
func startAgent(exe string, ids IDs, sock int) (int, error) {
	f := os.NewFile(uintptr(sock), "agent-sandbox-agent")
	cmd := &exec.Cmd{
		Path:       exe,
		Args:       []string{exe, LaunchArg, agentArg},
		Env:        launcherEnv(),
		ExtraFiles: []*os.File{f},
		SysProcAttr: &syscall.SysProcAttr{
			Credential: &syscall.Credential{Uid: uint32(ids.UID), Gid: uint32(ids.GID), Groups: []uint32{}},
			Setpgid:    true,
		},
	}
	err := cmd.Start()
	f.Close()
	if err != nil {
		return 0, fmt.Errorf("start a launcher as %s: %w", ids, err)
	}
	go func() { _ = cmd.Wait() }()
	return cmd.Process.Pid, nil
}

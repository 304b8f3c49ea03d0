//go:build linux

package sandbox

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// With a [Spawner], every command runs two launchers. The bot starts the
// first as it always does (cold, or started ahead), as its own uid, so that
// os/exec's Wait, pipes and process-group kills work as before; the
// spawner starts the second as the agent's ids. The first relays: it hands
// its command (descriptors and spec) to the second over their socket, the
// warm hand-over's message, passes on the signals it gets as messages, and
// exits as the command did once the second reports its status. The second
// confines and starts the command, as the agent's ids, and kills its tree
// when the first ends before it (the bot killed its process group, or the
// bot died).

// agentControl is the agent-side launcher's link to the launcher that
// relays for it: the socket, and a pidfd of that launcher (-1 when its pid
// was not learned).
type agentControl struct {
	sock, pidfd int
}

// noControl is a launcher's control when nothing relays for it.
var noControl = agentControl{sock: -1, pidfd: -1}

// launchAgent is the launcher the spawner started as the agent's ids. It
// refuses to run with any capability, or as root; new files of the
// agent's are group-writable (umask 002), so that the bot, a member of the
// agent's group, can still write what the agent created in the workspace.
// Then it is a launcher started ahead whose command comes from the relay.
func launchAgent(stderr io.Writer) int {
	if os.Getuid() == 0 || os.Geteuid() == 0 {
		fmt.Fprintln(stderr, "agent sandbox: the agent's launcher runs as root")
		return exitNotStarted
	}
	caps, err := procCaps()
	if err != nil {
		fmt.Fprintf(stderr, "agent sandbox: %v\n", err)
		return exitNotStarted
	}
	for _, k := range []string{"CapPrm", "CapEff", "CapAmb", "CapInh"} {
		if caps[k] != 0 {
			fmt.Fprintf(stderr, "agent sandbox: the agent's launcher holds capabilities (%s %#x)\n", k, caps[k])
			return exitNotStarted
		}
	}
	syscall.Umask(0o002)
	if err := unix.SetsockoptInt(warmSocket, unix.SOL_SOCKET, unix.SO_PASSCRED, 1); err != nil {
		fmt.Fprintf(stderr, "agent sandbox: SO_PASSCRED: %v\n", err)
		return exitNotStarted
	}
	return launchWarm(stderr, true)
}

// relay is the bot's launcher of a command that runs as the agent's ids:
// it hands files (the command's 0, 1, 2 and extra files) and s to the
// agent-side launcher on the socket agent, closes its copies but stderr's,
// forwards sigs as messages, and ends as the command did.
func relay(s spec, files []int, agent int, sigs chan os.Signal, stderr io.Writer) int {
	s.Relay = false
	f, err := specFile(s)
	if err != nil {
		fmt.Fprintf(stderr, "agent sandbox: hand the command over: %v\n", err)
		return exitNotStarted
	}
	fds := append(slices.Clone(files), int(f.Fd()))
	err = unix.Sendmsg(agent, []byte{'c'}, unix.UnixRights(fds...), nil, 0)
	f.Close()
	if err != nil {
		fmt.Fprintf(stderr, "agent sandbox: hand the command to the agent's launcher: %v\n", err)
		return exitNotStarted
	}
	for i, fd := range files {
		if i != 2 {
			_ = unix.Close(fd)
		}
	}
	var mu sync.Mutex
	go func() {
		for sig := range sigs {
			n := sig.(syscall.Signal)
			if n == unix.SIGTERM && os.Getppid() != s.Parent {
				// The parent-death signal: the bot is gone.
				n = unix.SIGKILL
			}
			mu.Lock()
			_, _ = unix.Write(agent, []byte{'s', byte(n)})
			mu.Unlock()
		}
	}()
	buf := make([]byte, 16)
	for {
		n, err := unix.Read(agent, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil || n == 0 {
			fmt.Fprintln(stderr, "agent sandbox: the agent's launcher ended without the command's status")
			return exitNotStarted
		}
		if buf[0] == 'x' && n == 5 {
			return exitAs(unix.WaitStatus(binary.LittleEndian.Uint32(buf[1:5])))
		}
	}
}

// control serves the relay's messages until it ends: a signal is passed
// on to the command's group; the relay's end (its socket closed, or its
// pidfd readable) kills the group.
func control(c agentControl, group int) {
	fds := []unix.PollFd{{Fd: int32(c.sock), Events: unix.POLLIN}}
	if c.pidfd >= 0 {
		fds = append(fds, unix.PollFd{Fd: int32(c.pidfd), Events: unix.POLLIN})
	}
	buf := make([]byte, 16)
	for {
		if _, err := unix.Poll(fds, -1); err != nil {
			if errors.Is(err, unix.EINTR) {
				continue
			}
			break
		}
		if len(fds) > 1 && fds[1].Revents != 0 {
			break
		}
		if fds[0].Revents == 0 {
			continue
		}
		n, err := unix.Read(c.sock, buf)
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.EAGAIN) {
			continue
		}
		if err != nil || n == 0 {
			break
		}
		if buf[0] == 's' && n == 2 {
			_ = unix.Kill(-group, syscall.Signal(buf[1]))
		}
	}
	_ = unix.Kill(-group, unix.SIGKILL)
}

// report tells the relay, if any, how the command ended.
func report(c agentControl, status unix.WaitStatus) {
	if c.sock < 0 {
		return
	}
	msg := make([]byte, 5)
	msg[0] = 'x'
	binary.LittleEndian.PutUint32(msg[1:], uint32(status))
	_, _ = unix.Write(c.sock, msg)
}

// exited is the wait status of a process that exited with code.
func exited(code int) unix.WaitStatus { return unix.WaitStatus(code << 8) }

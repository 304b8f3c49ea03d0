//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// warmArg is the descriptor argument of a launcher started ahead of its
// command (argv [executable, LaunchArg, warmArg]): its descriptor 3 is a
// socket to the bot, and the command comes through it later.
const warmArg = "warm"

// warmSocket is a warm launcher's descriptor of its socket to the bot.
const warmSocket = 3

// maxHanded is the most descriptors one hand-over carries: the command's
// 0, 1 and 2, its extra files and the spec (the kernel's SCM_MAX_FD).
const maxHanded = 253

// handedMin is the fewest: 0, 1, 2 and the spec.
const handedMin = 4

// launchWarm is the launcher started ahead of its command. It does what
// does not depend on the command (the Go runtime's start, the subreaper,
// the signal handlers, a thread confined but for its view: see ahead),
// says so with one byte on its socket, and blocks until the bot hands it
// the command: one message whose descriptors are the command's 0, 1, 2,
// its extra files, and the spec last. From there on it is the cold
// launcher: a new Landlock domain for this command, and so on. Until then it holds nothing but its own binary: a signal that would
// end a process ends it, and so does the bot closing the socket (the bot
// shutting down, or dying). The agent-side launcher (agent) is one whose
// command comes from the launcher that relays it, which it then serves
// (see control).
func launchWarm(stderr io.Writer, agent bool) int {
	sigs, err := becomeReaper(stderr)
	if err != nil {
		return exitNotStarted
	}
	var mu sync.Mutex
	idle := true
	handed := make(chan struct{})
	go func() {
		for {
			select {
			case <-handed:
				return
			case sig := <-sigs:
				mu.Lock()
				if !idle {
					mu.Unlock()
					// The command has come: the signal is for it.
					select {
					case sigs <- sig:
					default:
					}
					return
				}
				if s := sig.(syscall.Signal); s != unix.SIGWINCH && s != unix.SIGCONT {
					os.Exit(dieOf(s))
				}
				mu.Unlock()
			}
		}
	}()
	// The first spec decoded costs the JSON package's reflection over
	// the type: paid here, before the command waits for it, as is the
	// thread the command starts from, confined but for its view.
	_ = json.Unmarshal([]byte(`{"path":"","args":[],"env":[],"view":{"extra":{}}}`), new(spec))
	pre := confineAhead()
	// The bot may have handed the command over and closed its end before
	// this: the write then fails, and the command is still there to read.
	_, _ = unix.Write(warmSocket, []byte{'r'})
	// The thread confined ahead takes the command itself and starts it
	// when it fits: no other thread is woken before the command starts.
	var h handover
	taken := make(chan struct{})
	pre.run(func(confined error) {
		defer close(taken)
		h = takeCommand(agent, func() {
			mu.Lock()
			idle = false
			close(handed)
			mu.Unlock()
		})
		if h.err == nil && fits(h.spec) {
			b := beginAhead(h.spec, h.files(), confined)
			h.begun = &b
		}
	})
	<-taken
	if h.err != nil {
		if errors.Is(h.err, io.EOF) {
			return 0
		}
		if len(h.fds) > 2 {
			stderr = fdWriter(h.fds[2])
		}
		fmt.Fprintf(stderr, "agent sandbox: %v\n", h.err)
		return exitNotStarted
	}
	files := h.files()
	// The command's stderr stays open (close-on-exec) for what the
	// launcher may still have to say once the command runs, as a cold
	// launcher keeps its own descriptor 2; the others are closed.
	drop := append(slices.Clone(files[:2]), files[3:]...)
	ctl := noControl
	if agent {
		ctl.sock, ctl.pidfd = warmSocket, h.pidfd
	}
	return run(h.spec, files, drop, sigs, fdWriter(files[2]), ctl, h.begun)
}

// handover is what a launcher started ahead took from the bot.
type handover struct {
	// fds are the command's 0, 1, 2, its extra files, and the spec's
	// (closed once read) last.
	fds  []int
	spec spec
	// err is why there is no command: io.EOF when the bot closed the
	// socket instead.
	err error
	// pidfd is the relay's, for an agent-side launcher (-1 without).
	pidfd int
	// begun is the command started from the thread confined ahead; nil
	// when it was not (its spec does not fit it).
	begun *begun
}

// files returns the command's descriptors.
func (h handover) files() []int { return h.fds[:len(h.fds)-1] }

// takeCommand waits for the bot's hand-over on the warm socket and reads
// the spec; handed is called as soon as it has come (or the bot has
// gone). An agent-side launcher (agent) opens a pidfd of the relay that
// sent it.
func takeCommand(agent bool, handed func()) handover {
	fds, sender, err := receive(warmSocket)
	handed()
	h := handover{fds: fds, err: err, pidfd: -1}
	// The socket stays open until the launcher exits: its end is how the
	// bot learns that the command has ended and starts a replacement. The
	// command does not inherit it.
	unix.CloseOnExec(warmSocket)
	if err != nil {
		return h
	}
	// The relay's pid, which the kernel vouches for: its end is the
	// command's, even while another process holds the socket's other end
	// (the bot's copy, until it is closed).
	if agent && sender > 0 {
		if fd, err := unix.PidfdOpen(sender, 0); err == nil {
			h.pidfd = fd
			unix.CloseOnExec(fd)
		}
	}
	files := h.files()
	h.spec, h.err = readSpecFD(fds[len(fds)-1], len(files)-3)
	return h
}

// receive reads the bot's hand-over from sock: the descriptors it carries
// and the sender's pid (0 unless sock has SO_PASSCRED), or io.EOF when the
// bot closed the socket instead.
func receive(sock int) ([]int, int, error) {
	buf := make([]byte, 1)
	oob := make([]byte, unix.CmsgSpace(maxHanded*4)+unix.CmsgSpace(unix.SizeofUcred))
	for {
		n, oobn, flags, _, err := unix.Recvmsg(sock, buf, oob, unix.MSG_CMSG_CLOEXEC)
		// A socket closed with data it had not read (the bot's end, with
		// the ready byte unread) reports ECONNRESET once, before what is
		// queued for this end.
		if errors.Is(err, unix.EINTR) || errors.Is(err, unix.ECONNRESET) {
			continue
		}
		if err != nil {
			return nil, 0, fmt.Errorf("receive the command: %w", err)
		}
		if n == 0 && oobn == 0 {
			return nil, 0, io.EOF
		}
		msgs, err := unix.ParseSocketControlMessage(oob[:oobn])
		if err != nil {
			return nil, 0, fmt.Errorf("receive the command: %w", err)
		}
		var fds []int
		pid := 0
		for i := range msgs {
			if cred, err := unix.ParseUnixCredentials(&msgs[i]); err == nil {
				pid = int(cred.Pid)
				continue
			}
			got, err := unix.ParseUnixRights(&msgs[i])
			if err != nil {
				return fds, 0, fmt.Errorf("receive the command: %w", err)
			}
			fds = append(fds, got...)
		}
		if flags&unix.MSG_CTRUNC != 0 || len(fds) < handedMin {
			return fds, 0, fmt.Errorf("receive the command: %d descriptors", len(fds))
		}
		return fds, pid, nil
	}
}

// fdWriter writes to a descriptor with write(2) alone: the warm launcher's
// error messages go to the command's stderr, which it holds only as a
// number.
type fdWriter int

// Write writes p to the descriptor.
func (w fdWriter) Write(p []byte) (int, error) {
	n, err := unix.Write(int(w), p)
	if n < 0 {
		n = 0
	}
	return n, err
}

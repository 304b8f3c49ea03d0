//go:build linux

package sandbox

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// refillDelay is how long after a launcher's exit its replacement is
// started: the spawner is then past its Wait, and the replacement's start
// (the Go runtime's, a few milliseconds of CPU) does not delay the end of
// the command the user waits for, but overlaps what follows it (the
// model's next answer).
const refillDelay = 20 * time.Millisecond

// pool is the launcher started ahead of its command, and its replacement
// being started.
type pool struct {
	mu sync.Mutex
	// next is the launcher the next command goes to; nil when none is
	// started.
	next *warm
	// starting is set while a replacement is being started.
	starting bool
	closed   bool
	// starts counts the replacements being started, for Close.
	starts sync.WaitGroup
}

// warm is a launcher process started ahead of its command.
type warm struct {
	proc *os.Process
	conn *net.UnixConn
	// attr is what it was started with: a command that asks for anything
	// else is started cold.
	attr *syscall.SysProcAttr
	// ready is closed when the launcher said it is ready, or died first
	// (ok tells which).
	ready chan struct{}
	ok    atomic.Bool
}

// Start starts cmd, which [Launcher.Wrap] rewrote, as cmd.Start does. With
// [WithWarm], a launcher started ahead takes the command when cmd allows
// it (no context, standard streams that are files or nil, the process
// attributes Wrap and procgroup.Set give); otherwise, or when that
// launcher is gone, cmd.Start starts a new one. Either way the bot's copy
// of the command's spec is closed once the launcher has its own. After
// Start, cmd is used as after cmd.Start (Wait, Process, ProcessState).
func (l *Launcher) Start(cmd *exec.Cmd) error {
	spec := l.specOf(cmd)
	if spec == nil {
		return cmd.Start()
	}
	defer spec.Close()
	if n := len(cmd.ExtraFiles); l.agents.spawner != nil && n >= 2 {
		// The agent-side launcher's socket: once the launcher has its
		// copy, the bot's would only keep it from seeing the end.
		defer cmd.ExtraFiles[n-2].Close()
	}
	if w := l.take(cmd); w != nil {
		if err := w.hand(cmd); err == nil {
			cmd.Process = w.proc
			return nil
		}
		w.discard()
	}
	return cmd.Start()
}

// Close ends the launcher started ahead, if any, and starts no other:
// later commands start cold. It waits for a replacement being started.
func (l *Launcher) Close() error {
	l.pool.mu.Lock()
	l.pool.closed = true
	w := l.pool.next
	l.pool.next = nil
	l.pool.mu.Unlock()
	if w != nil {
		w.end()
	}
	l.pool.starts.Wait()
	l.closeAgents()
	return nil
}

// specOf returns the spec file Wrap added to cmd, nil when cmd is not a
// command Wrap rewrote for l.
func (l *Launcher) specOf(cmd *exec.Cmd) *os.File {
	n := len(cmd.ExtraFiles)
	if cmd.Process != nil || cmd.Path != l.executable || n == 0 || !IsLaunch(cmd.Args) || cmd.Args[2] != fmt.Sprint(2+n) {
		return nil
	}
	return cmd.ExtraFiles[n-1]
}

// take returns the launcher started ahead when cmd can go to it. Its
// replacement is started when it exits (the command has ended: the
// replacement's start does not compete for the CPU with the command the
// user waits for), or when a command finds none.
func (l *Launcher) take(cmd *exec.Cmd) *warm {
	if !l.warm || cmd.Cancel != nil || cmd.Err != nil || hasContext(cmd) {
		return nil
	}
	for _, f := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		if _, ok := f.(*os.File); !ok && f != nil {
			return nil
		}
	}
	for _, f := range cmd.ExtraFiles {
		if f == nil {
			return nil
		}
	}
	if !noPipes(cmd) {
		return nil
	}
	if cmd.Dir != "" {
		// cmd.Start reports a missing directory as an error; the warm
		// launcher would only exit with 126.
		if _, err := os.Stat(cmd.Dir); err != nil {
			return nil
		}
	}
	l.pool.mu.Lock()
	w := l.pool.next
	if w == nil {
		l.pool.mu.Unlock()
		l.refill()
		return nil
	}
	if !reflect.DeepEqual(cmd.SysProcAttr, w.attr) {
		l.pool.mu.Unlock()
		return nil
	}
	l.pool.next = nil
	l.pool.mu.Unlock()
	return w
}

// noPipes reports whether cmd has no pipe from StdinPipe, StdoutPipe or
// StderrPipe: their child ends are closed by cmd.Start alone, and a
// launcher that took the command instead would leave them open in the bot
// (the output would never end). It reads the length of an unexported
// field; should a Go release rename it, every command starts cold.
func noPipes(cmd *exec.Cmd) bool {
	v := reflect.ValueOf(cmd).Elem().FieldByName("childIOFiles")
	return v.IsValid() && v.Kind() == reflect.Slice && v.Len() == 0
}

// hasContext reports whether cmd was made by exec.CommandContext, even
// with its Cancel taken away: cmd.Start alone refuses to start it once the
// context is done. It reads an unexported field, as noPipes does; should a
// Go release rename it, every command starts cold.
func hasContext(cmd *exec.Cmd) bool {
	v := reflect.ValueOf(cmd).Elem().FieldByName("ctx")
	return !v.IsValid() || v.Kind() != reflect.Interface || !v.IsNil()
}

// refill starts a replacement launcher in the background (and, with a
// spawner, the agent-side one it will relay to), unless one is
// there or being started.
func (l *Launcher) refill() {
	l.refillAgent()
	p := &l.pool
	p.mu.Lock()
	defer p.mu.Unlock()
	if !l.warm || p.closed || p.next != nil || p.starting {
		return
	}
	p.starting = true
	p.starts.Add(1)
	go func() {
		defer p.starts.Done()
		w, err := l.start()
		p.mu.Lock()
		p.starting = false
		if err == nil && !p.closed {
			p.next = w
			w = nil
		}
		p.mu.Unlock()
		if w != nil {
			w.end()
		}
	}()
}

// start starts a launcher ahead of its command: the launcher binary with
// warmArg, its descriptor 3 one end of a socket pair, the attributes Wrap
// and procgroup.Set give a command.
func (l *Launcher) start() (*warm, error) {
	pair, err := unix.Socketpair(unix.AF_UNIX, unix.SOCK_SEQPACKET|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("sandbox: socketpair: %w", err)
	}
	theirs := os.NewFile(uintptr(pair[1]), "agent-sandbox-warm")
	defer theirs.Close()
	mine := os.NewFile(uintptr(pair[0]), "agent-sandbox-warm")
	c, err := net.FileConn(mine)
	mine.Close()
	if err != nil {
		return nil, fmt.Errorf("sandbox: the warm launcher's socket: %w", err)
	}
	conn, ok := c.(*net.UnixConn)
	if !ok {
		c.Close()
		return nil, errors.New("sandbox: the warm launcher's socket is not a Unix socket")
	}
	cmd := &exec.Cmd{
		Path:        l.executable,
		Args:        []string{l.executable, LaunchArg, warmArg},
		Env:         launcherEnv(),
		ExtraFiles:  []*os.File{theirs},
		SysProcAttr: &syscall.SysProcAttr{Pdeathsig: syscall.SIGTERM, Setpgid: true},
	}
	if err := l.startWarm(cmd); err != nil {
		conn.Close()
		return nil, fmt.Errorf("sandbox: start the warm launcher: %w", err)
	}
	w := &warm{proc: cmd.Process, conn: conn, attr: cmd.SysProcAttr, ready: make(chan struct{})}
	go l.watch(w)
	return w, nil
}

// watch reads the launcher's ready byte, then waits for the end of its
// socket: the launcher has exited (or was ended). Its replacement is
// started then, unless it died idle before it was ready (a launcher that
// cannot start would be started again and again).
func (l *Launcher) watch(w *warm) {
	buf := make([]byte, 1)
	_, err := w.conn.Read(buf)
	w.ok.Store(err == nil)
	close(w.ready)
	if err == nil {
		_, _ = w.conn.Read(buf)
	}
	w.conn.Close()
	p := &l.pool
	p.mu.Lock()
	idle := p.next == w
	if idle {
		p.next = nil
	}
	p.mu.Unlock()
	if idle {
		w.end()
	}
	if !idle || w.ok.Load() {
		time.AfterFunc(refillDelay, l.refill)
	}
}

// hand gives cmd's standard streams, extra files and spec to the warm
// launcher, as cmd.Start would give them to a new one: nil streams are
// the null device, and every file is put in blocking mode (File.Fd).
func (w *warm) hand(cmd *exec.Cmd) error {
	var null *os.File
	files := make([]*os.File, 0, 3+len(cmd.ExtraFiles))
	for _, s := range []any{cmd.Stdin, cmd.Stdout, cmd.Stderr} {
		f, _ := s.(*os.File)
		if f == nil {
			if null == nil {
				var err error
				if null, err = os.OpenFile(os.DevNull, os.O_RDWR, 0); err != nil {
					return fmt.Errorf("sandbox: hand the command over: %w", err)
				}
				defer null.Close()
			}
			f = null
		}
		files = append(files, f)
	}
	files = append(files, cmd.ExtraFiles...)
	if len(files) > maxHanded {
		return fmt.Errorf("sandbox: %d descriptors for one command", len(files))
	}
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	_, _, err := w.conn.WriteMsgUnix([]byte{'c'}, unix.UnixRights(fds...), nil)
	runtime.KeepAlive(files)
	if err != nil {
		return fmt.Errorf("sandbox: hand the command over: %w", err)
	}
	return nil
}

// discard ends a launcher that could not take its command, in the
// background.
func (w *warm) discard() { go w.end() }

// end kills the launcher and waits for it.
func (w *warm) end() {
	w.conn.Close()
	_ = w.proc.Kill()
	_, _ = w.proc.Wait()
}

// waitWarm waits until a launcher started ahead is ready for a command:
// what a command that comes after the model's answer finds.
func (l *Launcher) waitWarm(ctx context.Context) error {
	for {
		l.pool.mu.Lock()
		w, closed := l.pool.next, l.pool.closed
		l.pool.mu.Unlock()
		if closed || !l.warm {
			return errors.New("sandbox: the launcher keeps none started ahead")
		}
		if w != nil {
			select {
			case <-w.ready:
				if !w.ok.Load() {
					return errors.New("sandbox: the warm launcher ended before it was ready")
				}
				return l.waitAgent(ctx)
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		select {
		case <-time.After(time.Millisecond):
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

//go:build linux

package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// exitNotStarted is the launcher's exit code when the command could not be
// started (a shell's "command not executable").
const exitNotStarted = 126

// forwarded returns the signals the launcher passes on to the command's
// process group.
func forwarded() []os.Signal {
	return []os.Signal{unix.SIGTERM, unix.SIGINT, unix.SIGHUP, unix.SIGQUIT, unix.SIGUSR1, unix.SIGUSR2, unix.SIGWINCH, unix.SIGCONT, unix.SIGALRM}
}

// launcherName is the launcher's process name (its comm).
const launcherName = "agent-sandbox"

// IsLaunch reports whether args (os.Args) ask for the launcher mode.
func IsLaunch(args []string) bool {
	return len(args) == 3 && args[1] == LaunchArg || isNetnsStage(args)
}

// Launch is the launcher mode: the bot's main calls it first thing when
// [IsLaunch] is true, and exits with what it returns. It reads the command
// from the descriptor args names (or, started warm, waits for the bot to
// hand it over: see warmArg), becomes a child subreaper, starts the
// command from a thread confined for it alone (no_new_privs, a new
// Landlock domain) that then ends,
// forwards signals to it, waits for it, kills every process left, and
// returns the command's exit code; a command killed by a signal kills the
// launcher with the same signal. Problems go to stderr, which the command
// would have written to.
func Launch(args []string, stderr io.Writer) int {
	// The main goroutine keeps the main thread: its name below is the
	// process's, and the confined thread startConfined ends is never
	// this one (the Go runtime cannot end the main thread).
	runtime.LockOSThread()
	// Not dumpable: the command (same user, same domain) cannot read the
	// launcher's memory or /proc entries. A name of its own: the agent
	// looking for the bot by its name does not stop at the launcher.
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 0, 0, 0, 0)
	if name, err := unix.BytePtrFromString(launcherName); err == nil {
		_ = unix.Prctl(unix.PR_SET_NAME, uintptr(unsafe.Pointer(name)), 0, 0, 0)
	}
	if len(args) == 3 {
		switch args[2] {
		case warmArg:
			return launchWarm(stderr, false)
		case agentArg:
			return launchAgent(stderr)
		case spawnerArg:
			return launchSpawner(stderr)
		case spawnerServeArg:
			return serveSpawner(stderr)
		}
	}
	if isNetnsStage(args) {
		return netnsStage(args, stderr)
	}
	s, err := readSpec(args)
	if err != nil {
		fmt.Fprintf(stderr, "agent sandbox: %v\n", err)
		return exitNotStarted
	}
	sigs, err := becomeReaper(stderr)
	if err != nil {
		return exitNotStarted
	}
	files := []int{0, 1, 2}
	for i := range s.ExtraFiles + s.relayed() {
		files = append(files, 3+i)
	}
	return run(s, files, files[3:], sigs, stderr, noControl, nil)
}

// becomeReaper makes the launcher a child subreaper and catches the
// signals it forwards.
func becomeReaper(stderr io.Writer) (chan os.Signal, error) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		fmt.Fprintf(stderr, "agent sandbox: prctl(PR_SET_CHILD_SUBREAPER): %v\n", err)
		return nil, err
	}
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, forwarded()...)
	return sigs, nil
}

// run starts the command confined to s's view with
// files as its descriptors 0, 1, 2, 3... and no other, closes the
// launcher's copies in drop, forwards sigs to it, waits for it and kills what is left.
// A spec to relay (with a [Spawner]) goes to the agent-side launcher whose
// socket is the last of files instead (see relay). The agent-side launcher
// has a control: the relay's messages, and its status at the end. A
// launcher started ahead may have started the command already, from its
// thread confined ahead (begun); nil is not.
func run(s spec, files, drop []int, sigs chan os.Signal, stderr io.Writer, ctl agentControl, begun *begun) int {
	if s.Relay {
		return relay(s, files[:len(files)-1], files[len(files)-1], sigs, stderr)
	}
	// The spawner made the launcher the leader of a new process group
	// (procgroup.Set), and it signals that group to end the command. The
	// command stays in it; the launcher leaves it below, so a group
	// SIGKILL ends the command and the launcher still cleans up.
	leader := isLeader()
	pid, serve, err := 0, func() {}, error(nil)
	if begun != nil {
		// It has left the group already.
		leader, pid, err = begun.leader, begun.pid, begun.err
	} else {
		if err := cloexecFrom(3); err != nil {
			fmt.Fprintf(stderr, "agent sandbox: %v\n", err)
			return exitNotStarted
		}
		pid, serve, err = startConfined(s, files, !leader)
	}
	if err != nil {
		fmt.Fprintf(stderr, "agent sandbox: %v\n", err)
		report(ctl, exited(exitNotStarted))
		return exitNotStarted
	}
	for _, fd := range drop {
		_ = unix.Close(fd)
	}
	group := pid
	if leader {
		group = os.Getpid()
		if begun == nil {
			leaveGroup()
		}
	}
	// Only now: a group kill that comes before the launcher has left the
	// group ends it before its clean-up, and starting to serve costs the
	// launcher's one P a moment.
	serve()
	stop := make(chan struct{})
	go forward(sigs, stop, group, s.Parent)
	if ctl.sock >= 0 {
		go control(ctl, group)
	}
	status, err := waitFor(pid)
	close(stop)
	killLeft()
	if err != nil {
		fmt.Fprintf(stderr, "agent sandbox: wait: %v\n", err)
		report(ctl, exited(exitNotStarted))
		return exitNotStarted
	}
	report(ctl, status)
	return exitAs(status)
}

// startConfined starts the command with files as its descriptors 0, 1,
// 2, 3... from a thread of its own, confined to s's view, which ends once
// the command is started. The Landlock domain is per thread: a launcher
// thread left in it would be the command's to signal (scoped signals
// allow a domain's own members), so a kill -9 $PPID would end the
// launcher before its clean-up, a kill -STOP would hang the bot's wait.
// With the thread gone no launcher thread is in the domain. The command
// has no parent-death signal for the same reason: Linux sends it when the
// forking thread ends, that is at once; the bot, a subreaper, ends what a
// launcher killed from outside leaves (Reaper).
//
// It returns the command's pid, and what the launcher must start serving
// for the command once it has left the spawner's group (the seccomp
// listener's answers, a network namespace's bridge).
func startConfined(s spec, files []int, setpgid bool) (int, func(), error) {
	type started struct {
		pid   int
		serve func()
		err   error
	}
	done := make(chan started, 1)
	go func() {
		// Never unlocked: the Go runtime ends the thread with the
		// goroutine instead of reusing it.
		runtime.LockOSThread()
		if s.EgressTier == EgressNamespace {
			pid, serve, err := startInNamespace(s, files, setpgid)
			done <- started{pid: pid, serve: serve, err: err}
			return
		}
		serve := func() {}
		if err := confineThread(s, func(listener int) { serve = func() { go superviseProcessCalls(listener) } }); err != nil {
			done <- started{err: err}
			return
		}
		pid, err := forkExec(s, files, setpgid)
		done <- started{pid: pid, serve: serve, err: err}
	}()
	r := <-done
	return r.pid, r.serve, r.err
}

// forkExec starts s's command from the calling thread with files as its
// descriptors 0, 1, 2, 3..., in a process group of its own when setpgid.
// syscall.ForkExec rather than os/exec: the launcher runs on every spawn,
// and os/exec's path search and pidfd probe (a throw-away child) are time
// the agent waits for.
func forkExec(s spec, files []int, setpgid bool) (int, error) {
	childFiles := make([]uintptr, len(files))
	for i, fd := range files {
		childFiles[i] = uintptr(fd)
	}
	pid, err := syscall.ForkExec(s.Path, s.Args, &syscall.ProcAttr{
		Dir:   s.Dir,
		Env:   withTempDir(s.Env, s.View.Temp),
		Files: childFiles,
		Sys:   &syscall.SysProcAttr{Setpgid: setpgid},
	})
	if err != nil {
		return 0, fmt.Errorf("start %s: %w", s.Path, err)
	}
	return pid, nil
}

// isLeader reports whether the launcher leads its process group.
func isLeader() bool { return unix.Getpgrp() == os.Getpid() }

// leaveGroup moves the launcher, the leader of the group the spawner
// signals, to its parent's group once the command has started in it.
func leaveGroup() {
	if pg, err := unix.Getpgid(os.Getppid()); err == nil {
		_ = unix.Setpgid(0, pg)
	}
}

// waitFor waits for the process pid to end and returns its status. It
// reaps every other child on the way: as a subreaper the launcher adopts
// the orphans of the command's tree (a double fork, a daemon's parent), and
// those that end before the command would stay zombies, one process-table
// entry each, for as long as the command (an MCP server, say) runs.
func waitFor(pid int) (unix.WaitStatus, error) {
	for {
		var status unix.WaitStatus
		got, err := unix.Wait4(-1, &status, 0, nil)
		if errors.Is(err, unix.EINTR) || (err == nil && got != pid) {
			continue
		}
		return status, err
	}
}

// readSpec reads and closes the descriptor args names.
func readSpec(args []string) (spec, error) {
	if !IsLaunch(args) {
		return spec{}, errors.New("not started in launcher mode")
	}
	fd, err := strconv.Atoi(args[2])
	if err != nil || fd < 3 {
		return spec{}, fmt.Errorf("bad descriptor %q", args[2])
	}
	return readSpecFD(fd, fd-3)
}

// readSpecFD reads and closes the spec in descriptor fd, for a command
// that inherits extra descriptors from 3 on.
func readSpecFD(fd, extra int) (spec, error) {
	f := os.NewFile(uintptr(fd), "agent-sandbox-spec")
	defer f.Close()
	var s spec
	if err := json.NewDecoder(io.LimitReader(f, 64<<20)).Decode(&s); err != nil {
		return spec{}, fmt.Errorf("read the command: %w", err)
	}
	if s.Path == "" || len(s.Args) == 0 || s.Env == nil {
		return spec{}, errors.New("the command has no path, arguments or environment")
	}
	if s.ExtraFiles+s.relayed() != extra {
		return spec{}, fmt.Errorf("%d inherited descriptors, the spec says %d", extra, s.ExtraFiles+s.relayed())
	}
	return s, nil
}

// withTempDir sets TMPDIR (and TMP, TEMP where set) to the view's
// temporary directory: the host's is out of the view.
func withTempDir(env []string, dir string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "TMPDIR":
			continue
		case "TMP", "TEMP":
			kv = name + "=" + dir
		}
		out = append(out, kv)
	}
	return append(out, "TMPDIR="+dir)
}

// forward passes each signal on to the command's process group until stop
// is closed. A SIGTERM that comes when the launcher's parent is no longer
// the bot is the parent-death signal: the command is killed.
func forward(sigs <-chan os.Signal, stop <-chan struct{}, group, parent int) {
	for {
		select {
		case <-stop:
			return
		case sig := <-sigs:
			s := sig.(syscall.Signal)
			if s == unix.SIGTERM && os.Getppid() != parent {
				s = unix.SIGKILL
			}
			_ = unix.Kill(-group, s)
		}
	}
}

// killLeft kills every process left below the launcher and reaps it:
// its children (orphans are re-parented to it, a subreaper) are killed,
// round after round, until none is left. It runs on an unrestricted
// thread, which may signal the command's domain. A launcher with no
// child left (the command's orphans are re-parented to it before its own
// end is reported) learns so from one wait4 and reads no /proc file: the
// common case, paid at the end of every spawn.
func killLeft() {
	if noChildren() {
		return
	}
	for {
		for _, pid := range ownChildren() {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		var status unix.WaitStatus
		_, err := unix.Wait4(-1, &status, 0, nil)
		if errors.Is(err, unix.ECHILD) {
			return
		}
		if err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
	}
}

// noChildren reports whether the calling process has no child at all,
// running or ended: wait4 without waiting says ECHILD. A zombie it finds
// is reaped on the way (its pid is nothing to kill).
func noChildren() bool {
	for {
		var status unix.WaitStatus
		pid, err := unix.Wait4(-1, &status, unix.WNOHANG, nil)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ECHILD):
			return true
		case err == nil && pid > 0:
			continue
		}
		return false
	}
}

// ownChildren returns the pids of the calling process's children, from
// /proc/self/task/*/children: a child is listed under the thread that
// started it, or the one it was re-parented to. Reading these few files
// rather than every process's stat keeps the clean-up cheap: it runs at
// the end of every spawn.
func ownChildren() []int {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return nil
	}
	var out []int
	for _, t := range tasks {
		data, err := os.ReadFile("/proc/self/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(data)) {
			if pid, err := strconv.Atoi(f); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// exitAs returns the command's exit code, or kills the launcher with the
// signal that killed the command, so the spawner sees the same ending.
func exitAs(status unix.WaitStatus) int {
	if !status.Signaled() {
		return status.ExitStatus()
	}
	return dieOf(status.Signal())
}

// dieOf kills the launcher with sig, and returns the shell's exit code
// for it when sig does not end a Go program.
func dieOf(sig syscall.Signal) int {
	signal.Reset()
	_ = unix.Kill(os.Getpid(), sig)
	// A signal the Go runtime does not die of (SIGPIPE, SIGSEGV...) ends
	// the launcher with the shell's convention instead.
	time.Sleep(50 * time.Millisecond)
	return 128 + int(sig)
}

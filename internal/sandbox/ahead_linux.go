//go:build linux

package sandbox

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// ahead is a thread that a launcher started ahead confines before its
// command comes, with what does not depend on the command: no_new_privs
// and the seccomp filter on calls on other processes (filterThread), whose
// listener is answered from then on. It then takes the command from the
// bot itself, and when the spec fits it (see fits), restricts itself to
// the spec's view with a Landlock domain and starts the command
// (beginAhead). The filter's installation (a program the kernel checks and
// compiles), the thread's start and the hand-offs between threads are then
// off the path the command waits on: the thread that wakes for the
// command is the one that starts it. A spec it does not fit (egress, a
// relay, the benchmark's unfiltered launcher) leaves it unused: it ends,
// and a thread of its own is confined for the command as in a cold
// launcher.
type ahead struct {
	jobs chan func(confined error)
}

// confineAhead starts the thread, and returns once it is confined.
func confineAhead() *ahead {
	a := &ahead{jobs: make(chan func(error), 1)}
	confined := make(chan struct{})
	go func() {
		// Never unlocked: the Go runtime ends the thread with the
		// goroutine, as in startConfined.
		runtime.LockOSThread()
		err := unix.Prctl(unix.PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)
		if err == nil {
			// Answered at once: until the thread starts a command,
			// nothing calls, and once the thread and the command's tree
			// are gone the listener reports it and is closed.
			err = filterThread(false, func(listener int) { go superviseProcessCalls(listener) })
		}
		close(confined)
		job := <-a.jobs
		job(err)
	}()
	<-confined
	return a
}

// fits reports whether s's command can start from the thread: it wants
// the filter without egress rules, and is not relayed.
func fits(s spec) bool { return s.Egress == nil && !s.NoProcessFilter && !s.Relay }

// run runs job on the thread, with what confining it ahead returned, and
// the thread ends with it: run it once. A job that does not start a
// command from it leaves it unused.
func (a *ahead) run(job func(confined error)) { a.jobs <- job }

// begun is a command started from the thread confined ahead: its pid, or
// why it did not start, and whether the launcher led the spawner's group
// (the command's, which the launcher has left).
type begun struct {
	pid    int
	err    error
	leader bool
}

// beginAhead starts s's command with files as its descriptors from the
// calling thread, the thread confined ahead (confined is what confining
// it returned), once it is restricted to s's view, and leaves the
// spawner's group; as run and startConfined do for a thread of their own.
func beginAhead(s spec, files []int, confined error) begun {
	if confined != nil {
		return begun{err: confined}
	}
	leader := isLeader()
	if err := cloexecFrom(3); err != nil {
		return begun{err: err, leader: leader}
	}
	// s has no egress (fits): no TCP rule.
	if err := restrictThread(s.View, 0); err != nil {
		return begun{err: err, leader: leader}
	}
	pid, err := forkExec(s, files, !leader)
	if err == nil && leader {
		// At once, from this thread (the process group is the
		// process's): a group kill the command's first output
		// prompts must not find the launcher still in it.
		leaveGroup()
	}
	return begun{pid: pid, err: err, leader: leader}
}

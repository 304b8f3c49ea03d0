//go:build linux

package sandbox

import (
	"runtime"

	"golang.org/x/sys/unix"
)

// ahead is a thread that a launcher started ahead confines before its
// command comes, with what does not depend on the command: no_new_privs
// and the seccomp filter on calls on other processes (filterThread), whose
// listener is answered from then on. The command's own part, its Landlock
// domain (built from the spec's view) and its start, runs on that thread
// once the spec has come. The filter's installation (a program the kernel
// checks and compiles) and the thread's start are then off the path the
// command waits on. A spec the thread does not fit (egress, a relay, the
// benchmark's unfiltered launcher) discards it: it ends unused, and a
// thread of its own is confined for the command as in a cold launcher.
type ahead struct {
	jobs chan func(err error)
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
		if job, ok := <-a.jobs; ok {
			job(err)
		}
	}()
	<-confined
	return a
}

// fits reports whether s's command can start from the thread: it wants
// the filter without egress rules, and is not relayed.
func (a *ahead) fits(s spec) bool {
	return a != nil && s.Egress == nil && !s.NoProcessFilter && !s.Relay
}

// run runs job on the thread, with what confining it ahead returned. Call
// run or discard once.
func (a *ahead) run(job func(err error)) { a.jobs <- job }

// discard ends the thread unused; nil is no thread.
func (a *ahead) discard() {
	if a != nil {
		close(a.jobs)
	}
}

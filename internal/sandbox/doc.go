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
// With [WithSpawner], commands run as the agent's own ids. [StartSpawner]
// starts the one process that may switch uids, before the bot gives up its
// privileges: it keeps CAP_SETUID and CAP_SETGID alone (the bounding set
// too, where it may), answers only the bot's pid, and only starts this
// binary's launcher, only as the configured ids. The launcher the bot
// starts (cold or warm, as above, as the bot's uid) relays its command to
// one the spawner started as the agent's ids, which confines and starts
// it and reports how it ended; so os/exec's Wait, pipes and process-group
// kills work as before, and the kernel's same-uid checks (prlimit,
// scheduling, /proc/<pid>/environ, the metadata of the bot's files) keep
// every agent process from the bot.
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

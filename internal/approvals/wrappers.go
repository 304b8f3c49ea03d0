package approvals

import (
	"strings"
)

// A wrapper is a command that runs another one given as its operands
// (nice rm -rf x, xargs -n 1 rm -rf, setsid -f rm -rf x). Which operand the
// command starts at depends on which options take a value, and getopt's
// rules (clusters such as -tn1, attached values, "--max-args 1",
// unambiguous abbreviations of long options) make that easy to get wrong.
// So no wrapper's options are parsed: every operand after the wrapper's
// name is taken as a place the command may start, and each is looked at
// (a duration, a lock file or a new root is then looked at as a command
// too, which finds nothing). A computed word there may be the command, and
// is asked about as one, even where it is more likely an option's value
// (N=5; nice -n $N make): whether an option takes a value is what is not
// parsed.

// wrapperSpec says what a wrapper does besides running its operands.
type wrapperSpec struct {
	// script holds the one-letter options whose value is a shell script
	// (su -c, flock -c, script -c), scriptLong the long ones.
	script     string
	scriptLong []string
	// joins says the wrapper hands an operand of several words to a shell
	// (parallel 'rm -rf {}' ::: a, sg group 'cmd'): every operand with a
	// blank in it is parsed as a script too.
	joins bool
	// privileged says the wrapper runs its command as another user.
	privileged bool
}

// wrappers are the commands that run another command.
var wrappers = map[string]wrapperSpec{
	// Shell builtins and the coreutils.
	"command": {},
	"builtin": {},
	"exec":    {},
	"nice":    {},
	"nohup":   {},
	"time":    {},
	"timeout": {},
	"stdbuf":  {},
	"chroot":  {},
	"xargs":   {},
	"env":     {},
	// util-linux.
	"setsid":  {},
	"flock":   {script: "c", scriptLong: []string{"--command"}},
	"nsenter": {},
	"unshare": {},
	"chrt":    {},
	"taskset": {},
	"ionice":  {},
	"prlimit": {},
	"setpriv": {},
	"choom":   {},
	"setarch": {}, "linux32": {}, "linux64": {}, "i386": {}, "x86_64": {},
	"script":  {script: "c", scriptLong: []string{"--command"}},
	"runuser": {script: "c", scriptLong: []string{"--command", "--session-command"}, privileged: true},
	"su":      {script: "c", scriptLong: []string{"--command", "--session-command"}, privileged: true},
	"sg":      {script: "c", joins: true, privileged: true},
	"sudo":    {privileged: true},
	"doas":    {privileged: true},
	"pkexec":  {privileged: true},
	// Others that run a command they are given.
	"busybox": {}, "toybox": {},
	"numactl": {}, "cgexec": {}, "systemd-run": {}, "systemd-inhibit": {},
	"dbus-run-session": {}, "dbus-launch": {}, "ssh-agent": {},
	"fakeroot": {}, "proot": {}, "firejail": {}, "bwrap": {}, "faketime": {},
	"strace": {}, "ltrace": {},
	"valgrind": {}, "catchsegv": {}, "gdb": {},
	"unbuffer": {}, "chpst": {}, "setuidgid": {}, "softlimit": {},
	"tini": {}, "dumb-init": {}, "torsocks": {}, "proxychains": {}, "proxychains4": {},
	"xvfb-run": {}, "chronic": {}, "ifne": {}, "nq": {}, "entr": {},
	"parallel": {joins: true}, "sem": {joins: true},
	"nix-shell": {scriptLong: []string{"--run", "--command"}},
}

// wrapped follows a wrapper: its script options, and its command from
// every operand on.
func (c *command) wrapped(base string, spec wrapperSpec, args []string, hops int) {
	a := c.w.a
	if spec.privileged {
		a.add(RuleSudo)
	}
	for _, script := range scriptOptions(args, spec.script, spec.scriptLong) {
		c.nested(script)
	}
	if base == "env" {
		c.env(args, hops)
	}
	if base == "sudo" && shellOption(args) {
		// sudo -s and sudo -i run their command through a shell, joined.
		c.nested(strings.Join(operands(args), " "))
	}
	places := 0
	for i, s := range args {
		if s == "--" {
			continue
		}
		if spec.joins && strings.ContainsAny(s, " \t\n;&|") && !strings.HasPrefix(s, "-") {
			c.nested(s)
		}
		if !mayStartCommand(args, i) {
			continue
		}
		// Every place costs a look at the arguments after it: past the
		// first maxPlaces, only a name some rule or wrapper knows is
		// followed, and past twice that the command is too long to read.
		if places++; places > maxPlaces && !c.w.a.known(s) {
			continue
		}
		if places > 2*maxPlaces {
			c.w.a.add(RuleUnparsable)
			return
		}
		c.follow(args[i:], hops+1)
	}
}

// maxPlaces is how many operands of a wrapper are followed as the command
// whatever they name: a real invocation's command starts within a few.
const maxPlaces = 64

// mayStartCommand reports whether the command a wrapper runs may start at
// args[i]: any word but an option.
func mayStartCommand(args []string, i int) bool {
	s := args[i]
	return !strings.HasPrefix(s, "-") || leadsComputed(s)
}

// follow looks at argv as a command a wrapper runs, once for each place
// in a command's arguments: a wrapper inside a wrapper would otherwise
// look at the same operands again for every place it may start.
func (c *command) follow(argv []string, hops int) {
	if len(argv) == 0 {
		return
	}
	key := followKey{&argv[0], len(argv)}
	if c.w.a.followed[key] {
		return
	}
	c.w.a.followed[key] = true
	guess := *c
	guess.guessed = true
	guess.run(argv, hops)
}

// followKey names a run of arguments by where it starts in memory and its
// length: the operands wrappers are followed to are all suffixes of one
// command's arguments.
type followKey struct {
	first *string
	n     int
}

// scriptOptions returns the values of the options that take a shell
// script: -c in a cluster of one-letter options (its attached rest, and
// the next argument, since it is not known which of the letters before it
// take values) and the long ones, with "=" or the next argument.
func scriptOptions(args []string, short string, long []string) []string {
	var out []string
	for i, s := range args {
		if s == "--" {
			break
		}
		switch {
		case strings.HasPrefix(s, "--"):
			name, value, hasValue := strings.Cut(s, "=")
			for _, l := range long {
				if len(name) > 3 && strings.HasPrefix(l, name) {
					if hasValue {
						out = append(out, value)
					} else if i+1 < len(args) {
						out = append(out, args[i+1])
					}
					break
				}
			}
		case len(s) > 1 && s[0] == '-' && short != "":
			if j := strings.IndexAny(s[1:], short); j >= 0 {
				if rest := s[j+2:]; rest != "" {
					out = append(out, rest)
				}
				if i+1 < len(args) {
					out = append(out, args[i+1])
				}
			}
		}
	}
	return out
}

// hasOption returns a function that reports whether args hold one of the
// one-letter options letters (in a cluster too) or one of the long ones,
// before "--".
func hasOption(letters string, long ...string) func([]string) bool {
	return func(args []string) bool {
		for _, s := range args {
			switch {
			case s == "--":
				return false
			case strings.HasPrefix(s, "--"):
				name, _, _ := strings.Cut(s, "=")
				for _, l := range long {
					if len(name) > 3 && strings.HasPrefix(l, name) {
						return true
					}
				}
			case len(s) > 1 && s[0] == '-' && strings.ContainsAny(s[1:2], letters):
				return true
			}
		}
		return false
	}
}

// shellOption reports whether sudo is told to run its command through a
// shell (-s, -i, --shell, --login).
func shellOption(args []string) bool {
	return hasOption("si", "--shell", "--login")(args)
}

// operands returns the arguments that are not options, from the first one
// on.
func operands(args []string) []string {
	for i, s := range args {
		if s == "--" {
			return args[i+1:]
		}
		if !strings.HasPrefix(s, "-") {
			return args[i:]
		}
	}
	return nil
}

// env follows what env does beyond running its operands: -S splits a
// string into the command and its arguments, and a NAME=VALUE operand may
// set a variable whose value a program runs (GIT_PAGER).
func (c *command) env(args []string, hops int) {
	for i := 0; i < len(args); i++ {
		s := args[i]
		switch {
		case s == "-S" || s == "--split-string":
			if i+1 < len(args) {
				c.follow(append(strings.Fields(args[i+1]), args[i+2:]...), hops+1)
			}
		case strings.HasPrefix(s, "--split-string="):
			c.follow(append(strings.Fields(strings.TrimPrefix(s, "--split-string=")), args[i+1:]...), hops+1)
		case strings.HasPrefix(s, "-S"):
			c.follow(append(strings.Fields(s[2:]), args[i+1:]...), hops+1)
		default:
			if name, value, ok := strings.Cut(s, "="); ok && namePrefix.FindString(name) == name {
				c.w.a.assigned(name, value, c.w.depth)
			}
		}
	}
}

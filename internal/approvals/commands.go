package approvals

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"mvdan.cc/sh/v3/expand"
	"mvdan.cc/sh/v3/syntax"
)

// command is one simple command being looked at, with its statement (for
// its redirections) and the expansion configuration.
type command struct {
	w   *walker
	st  *syntax.Stmt
	cfg *expand.Config
}

// shells run a script given with -c, as a file operand, or on stdin.
var shells = map[string]bool{
	"sh": true, "bash": true, "dash": true, "zsh": true, "ksh": true, "mksh": true,
	"ash": true, "yash": true, "fish": true, "rbash": true,
}

// interpreters run a program given as a file operand or on stdin, as
// shells do; their inline code (-c, -e) and modules (-m) are not looked
// into. A version suffix (python3.12) is the same interpreter.
var interpreters = map[string]bool{
	"python": true, "python2": true, "python3": true, "pypy": true, "pypy3": true,
	"perl": true, "ruby": true, "node": true, "nodejs": true, "php": true, "lua": true,
}

// inlineFlags are the interpreters' options whose program is their
// argument, or a module, rather than a file or stdin.
var inlineFlags = map[string]bool{
	"-c": true, "-e": true, "-E": true, "-m": true, "-p": true, "-r": true,
	"--eval": true, "--print": true,
}

// isInterpreter reports whether base names one of interpreters.
func isInterpreter(base string) bool {
	return interpreters[base] || interpreters[strings.TrimRight(base, "0123456789.")]
}

// sqlClients take SQL in their arguments or on stdin.
var sqlClients = map[string]bool{
	"psql": true, "mysql": true, "mariadb": true, "sqlite3": true, "sqlite": true,
	"sqlcmd": true, "duckdb": true, "clickhouse-client": true,
}

// sqlDrop finds the statements the sql-drop rule is about.
var sqlDrop = regexp.MustCompile(`(?i)\b(drop|truncate)\b`)

// run looks at argv, the arguments of one command after expansion: it
// follows wrappers (env, nice, timeout, sudo, xargs...) to the command they
// run, parses the scripts given to shells and eval, and checks the rules.
func (c *command) run(argv []string, hops int) {
	a := c.w.a
	if len(argv) == 0 {
		return
	}
	if hops > maxDepth {
		a.add(RuleUnparsable)
		return
	}
	a.matchCustom(strings.Join(argv, " "))
	name := argv[0]
	if leadsComputed(name) || isComputedText(path.Base(name)) {
		a.add(RuleComputedCommand)
		return
	}
	args := argv[1:]
	switch base := path.Base(name); {
	case wrappers[base] != nil:
		if inner, ok := wrappers[base](args); ok {
			c.run(inner, hops+1)
		}
	case base == "sudo" || base == "doas" || base == "pkexec" || base == "su" || base == "runuser":
		a.add(RuleSudo)
		c.privileged(base, args, hops)
	case shells[base]:
		c.shell(args)
	case isInterpreter(base):
		c.interpreter(args)
		c.check(base, args)
	case base == "eval":
		c.nested(strings.Join(args, " "))
	case base == "source" || base == ".":
		if len(args) > 0 && isComputedText(args[0]) {
			c.nested(args[0])
		}
	case base == "busybox" || base == "toybox":
		c.run(args, hops+1)
	case base == "find":
		c.find(args, hops)
	case base == "watch":
		c.watch(args, hops)
	default:
		c.check(base, args)
	}
}

// check applies the rules about one command that runs no other.
func (c *command) check(base string, args []string) {
	a := c.w.a
	opts := beforeDashes(args)
	switch {
	case base == "rm":
		if shortFlag(opts, "rR") || longFlag(opts, 1, "recursive") {
			a.add(RuleRecursiveDelete)
		}
	case base == "rsync":
		if slices.ContainsFunc(opts, func(s string) bool { return strings.HasPrefix(s, "--del") || leadsComputed(s) }) {
			a.add(RuleRecursiveDelete)
		}
	case base == "chmod" || base == "chown" || base == "chgrp":
		if shortFlag(opts, "R") || longFlag(opts, 3, "recursive") {
			a.add(RuleRecursiveChmod)
		}
	case base == "git":
		c.git(args)
	case base == "dd":
		if slices.ContainsFunc(args, func(s string) bool { return strings.HasPrefix(s, "of=") || leadsComputed(s) }) {
			a.add(RuleDD)
		}
	case strings.HasPrefix(base, "mkfs") || base == "mke2fs" || base == "mkswap" || base == "wipefs":
		a.add(RuleMkfs)
	case base == "kill" || base == "pkill" || base == "killall":
		if !onlyProbes(base, args) {
			a.add(RuleKill)
		}
	case base == "shutdown" || base == "reboot" || base == "poweroff" || base == "halt":
		a.add(RuleShutdown)
	case base == "systemctl" || base == "init" || base == "telinit":
		if slices.ContainsFunc(args, isPowerAction) {
			a.add(RuleShutdown)
		}
	case base == "tee":
		if slices.ContainsFunc(opts, isDevice) {
			a.add(RuleDeviceWrite)
		}
	case sqlClients[base]:
		c.sql(args)
	case removesPackages(base, args):
		a.add(RulePackageRemoval)
	}
}

// isPowerAction reports whether a systemctl or init argument powers off,
// reboots, suspends or leaves multi-user mode, or may be computed as such.
func isPowerAction(s string) bool {
	switch s {
	case "poweroff", "reboot", "halt", "kexec", "soft-reboot", "suspend", "hibernate",
		"hybrid-sleep", "suspend-then-hibernate", "rescue", "emergency", "0", "1", "6", "s", "S":
		return true
	}
	return isComputedText(s)
}

// onlyProbes reports whether a kill, pkill or killall sends no signal: it
// sends signal 0 (a liveness check that changes nothing) or lists the
// signals. The signal must be written out; a computed one may be any.
func onlyProbes(base string, args []string) bool {
	for i, s := range args {
		switch {
		case s == "-0" || s == "--signal=0" || s == "-s0":
			return true
		case (s == "-s" || s == "--signal" || s == "-n") && i+1 < len(args) && args[i+1] == "0":
			return true
		case base != "pkill" && (s == "-l" || s == "-L" || s == "--list" || s == "--table"):
			return true
		case s == "--":
			return false
		}
	}
	return false
}

// sql checks a SQL client's arguments and input for DROP and TRUNCATE; a
// computed argument may hold either.
func (c *command) sql(args []string) {
	a := c.w.a
	for _, s := range args {
		if sqlDrop.MatchString(s) || isComputedText(s) {
			a.add(RuleSQLDrop)
			return
		}
	}
	in := c.stdin()
	if in.hasDoc && (sqlDrop.MatchString(in.doc) || isComputedText(in.doc)) {
		a.add(RuleSQLDrop)
	}
	if in.piped && sqlDrop.MatchString(in.before) {
		a.add(RuleSQLDrop)
	}
}

// git checks git's subcommands: push with force, reset --hard, clean.
func (c *command) git(args []string) {
	a := c.w.a
	i := 0
	for ; i < len(args); i++ {
		s := args[i]
		if !strings.HasPrefix(s, "-") {
			break
		}
		switch s {
		case "-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix", "--attr-source", "--exec-path":
			if s == "-c" && i+1 < len(args) && strings.HasPrefix(strings.ToLower(args[i+1]), "alias.") {
				// An alias defined on the command line can be anything.
				a.add(RuleComputedCommand)
			}
			if s != "--exec-path" {
				i++
			}
		}
		if strings.HasPrefix(strings.ToLower(s), "-calias.") {
			a.add(RuleComputedCommand)
		}
	}
	if i >= len(args) {
		return
	}
	sub, rest := args[i], beforeDashes(args[i+1:])
	if isComputedText(sub) {
		a.add(RuleComputedCommand)
		return
	}
	switch sub {
	case "push":
		plus := slices.ContainsFunc(rest, func(s string) bool { return strings.HasPrefix(s, "+") })
		if plus || shortFlag(rest, "f") || longFlag(rest, 3, "force", "force-with-lease", "force-if-includes", "mirror") {
			a.add(RuleGitForcePush)
		}
	case "reset":
		if longFlag(rest, 1, "hard") || slices.ContainsFunc(rest, leadsComputed) {
			a.add(RuleGitResetHard)
		}
	case "clean":
		if !shortFlagLiteral(rest, "n") && !longFlagLiteral(rest, 1, "dry-run") {
			a.add(RuleGitClean)
		}
	}
}

// removesPackages reports whether a package manager is told to remove
// packages.
func removesPackages(base string, args []string) bool {
	sub := firstOperand(args)
	switch {
	case base == "apt" || base == "apt-get" || base == "aptitude":
		return oneOf(sub, "remove", "purge", "autoremove", "autopurge")
	case base == "dpkg":
		return slices.ContainsFunc(args, func(s string) bool {
			return s == "-r" || s == "-P" || strings.HasPrefix(s, "--remove") || strings.HasPrefix(s, "--purge")
		})
	case base == "npm" || base == "pnpm":
		global := slices.ContainsFunc(args, func(s string) bool {
			return s == "-g" || s == "--global" || s == "--location=global" || isComputedText(s)
		})
		return global && oneOf(sub, "uninstall", "un", "unlink", "remove", "rm", "r")
	case base == "yarn":
		return sub == "global" && slices.Contains(args, "remove")
	case strings.HasPrefix(base, "pip"):
		return oneOf(sub, "uninstall", "uninstall-all")
	case strings.HasPrefix(base, "python"):
		i := slices.Index(args, "-m")
		return i >= 0 && i+2 < len(args) && strings.HasPrefix(args[i+1], "pip") && args[i+2] == "uninstall"
	case base == "uv":
		return sub == "pip" && slices.Contains(args, "uninstall")
	case base == "dnf" || base == "yum" || base == "microdnf" || base == "zypper":
		return oneOf(sub, "remove", "erase", "autoremove", "rm")
	case base == "apk":
		return sub == "del"
	case base == "pacman":
		return slices.ContainsFunc(args, func(s string) bool {
			return s == "--remove" || (len(s) > 1 && s[0] == '-' && s[1] == 'R')
		})
	case base == "brew":
		return oneOf(sub, "uninstall", "remove", "rm")
	case base == "snap" || base == "gem" || base == "conda" || base == "mamba":
		return oneOf(sub, "remove", "uninstall")
	}
	return false
}

// oneOf reports whether s is one of set, or computed.
func oneOf(s string, set ...string) bool { return slices.Contains(set, s) || isComputedText(s) }

// firstOperand returns the first argument that is not an option.
func firstOperand(args []string) string {
	for _, s := range args {
		if !strings.HasPrefix(s, "-") {
			return s
		}
	}
	return ""
}

// privileged looks at the command sudo, doas, pkexec, su or runuser runs.
func (c *command) privileged(base string, args []string, hops int) {
	if base == "su" || base == "runuser" {
		for i, s := range args {
			if (s == "-c" || s == "--command") && i+1 < len(args) {
				c.nested(args[i+1])
				return
			}
			if v, ok := strings.CutPrefix(s, "--command="); ok {
				c.nested(v)
				return
			}
		}
		return
	}
	withValue := map[string]bool{
		"sudo":   true, // -u -g -C -D -h -p -r -t -T -U
		"doas":   true, // -u -C
		"pkexec": true, // --user
	}
	valued := "ugCDhprtTU"
	i := 0
	for ; i < len(args); i++ {
		s := args[i]
		if s == "--" {
			i++
			break
		}
		if !strings.HasPrefix(s, "-") {
			break
		}
		if strings.HasPrefix(s, "--") {
			if !strings.Contains(s, "=") && (s == "--user" || s == "--group" || s == "--chdir" || s == "--prompt" || s == "--host" || s == "--role" || s == "--type" || s == "--close-from" || s == "--command-timeout" || s == "--other-user") {
				i++
			}
			continue
		}
		if withValue[base] && len(s) == 2 && strings.ContainsRune(valued, rune(s[1])) {
			i++
		}
	}
	if i < len(args) {
		c.run(args[i:], hops+1)
	}
}

// shell looks at the script a shell runs: the -c string, a file operand
// (not read: a file's content is not looked into, unless the command also
// downloads), or stdin: a here-document is parsed, a file is not, and
// anything else (a pipe) is a script computed when it runs.
func (c *command) shell(args []string) {
	a := c.w.a
	for i := 0; i < len(args); i++ {
		s := args[i]
		switch {
		case s == "--" || s == "-":
			i = len(args)
		case s == "--rcfile" || s == "--init-file" || s == "-o" || s == "+o" || s == "-O" || s == "+O":
			i++
		case strings.HasPrefix(s, "--"):
		case strings.HasPrefix(s, "-") || strings.HasPrefix(s, "+"):
			if strings.ContainsRune(s, 'c') {
				// The script is the first operand after the options.
				for j := i + 1; j < len(args); j++ {
					if !strings.HasPrefix(args[j], "-") && !strings.HasPrefix(args[j], "+") {
						c.nested(args[j])
						return
					}
				}
				a.add(RuleComputedCommand)
				return
			}
			if strings.ContainsRune(s, 's') {
				i = len(args) // the script comes from stdin
			}
		default:
			if isComputedText(s) || a.downloads {
				c.computedScript()
			}
			return
		}
	}
	in := c.stdin()
	switch {
	case in.hasDoc:
		c.nested(in.doc)
	case in.file && !in.piped:
	default:
		c.computedScript()
	}
}

// interpreter looks at the program an interpreter (python3, node, perl)
// runs, for the download-to-shell rule alone: in a command that downloads,
// a program read from a file operand, a pipe or a redirect is what was
// downloaded, as it is for a shell; inline code and modules are not
// (curl ... | python3 -m json.tool only formats the answer).
func (c *command) interpreter(args []string) {
	a := c.w.a
	if !a.downloads {
		return
	}
	fromStdin := true
	for _, s := range args {
		if inlineFlags[s] || strings.HasPrefix(s, "--eval=") || strings.HasPrefix(s, "--print=") {
			return
		}
		if s == "-" || !strings.HasPrefix(s, "-") {
			// The program: stdin ("-"), or a file operand.
			fromStdin = s == "-"
			break
		}
	}
	if !fromStdin {
		a.add(RuleDownloadToShell)
		return
	}
	if in := c.stdin(); !in.hasDoc && (in.piped || in.file) {
		a.add(RuleDownloadToShell)
	}
}

// computedScript records a script that is only known when it runs: a
// download when the command fetches something, else a computed command.
func (c *command) computedScript() {
	if c.w.a.downloads {
		c.w.a.add(RuleDownloadToShell)
		return
	}
	c.w.a.add(RuleComputedCommand)
}

// nested parses a script given to another command.
func (c *command) nested(script string) {
	a := c.w.a
	if isComputedText(script) {
		c.computedScript()
		return
	}
	a.matchCustom(script)
	a.script(script, c.w.depth+1)
}

// find looks at -delete and the commands of -exec, -execdir, -ok and
// -okdir.
func (c *command) find(args []string, hops int) {
	for i := 0; i < len(args); i++ {
		switch args[i] {
		case "-delete":
			c.w.a.add(RuleRecursiveDelete)
		case "-exec", "-execdir", "-ok", "-okdir":
			j := i + 1
			for j < len(args) && args[j] != ";" && args[j] != "+" {
				j++
			}
			c.run(args[i+1:j], hops+1)
			i = j
		}
	}
}

// watch looks at the command watch runs: through sh -c unless -x.
func (c *command) watch(args []string, hops int) {
	exec := false
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		switch s := args[i]; {
		case s == "-x" || s == "--exec":
			exec = true
		case s == "-n" || s == "--interval" || s == "-q" || s == "--equexit":
			i++
		}
	}
	i = min(i, len(args)) // an option's value may be missing
	if exec {
		c.run(args[i:], hops+1)
		return
	}
	c.nested(strings.Join(args[i:], " "))
}

// beforeDashes returns the arguments before "--", where options may stand
// (GNU tools take options anywhere before it).
func beforeDashes(args []string) []string {
	if i := slices.Index(args, "--"); i >= 0 {
		return args[:i]
	}
	return args
}

// shortFlag reports whether a short option cluster holds one of letters,
// or an argument starts with a computed value (it may be such a flag).
func shortFlag(args []string, letters string) bool {
	return slices.ContainsFunc(args, func(s string) bool {
		return leadsComputed(s) || (len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.ContainsAny(s, letters))
	})
}

// shortFlagLiteral is shortFlag without the computed case: for an option
// that makes a command harmless, which must be written out.
func shortFlagLiteral(args []string, letters string) bool {
	return slices.ContainsFunc(args, func(s string) bool {
		return len(s) > 1 && s[0] == '-' && s[1] != '-' && strings.ContainsAny(s, letters)
	})
}

// longFlag reports whether an argument is one of the long options names,
// or an abbreviation of one at least minLen letters long (GNU and git
// accept unambiguous abbreviations), or a computed argument.
func longFlag(args []string, minLen int, names ...string) bool {
	return slices.ContainsFunc(args, leadsComputed) || longFlagLiteral(args, minLen, names...)
}

// longFlagLiteral is longFlag without the computed case.
func longFlagLiteral(args []string, minLen int, names ...string) bool {
	return slices.ContainsFunc(args, func(s string) bool {
		opt, ok := strings.CutPrefix(s, "--")
		if !ok {
			return false
		}
		opt, _, _ = strings.Cut(opt, "=")
		return len(opt) >= minLen && slices.ContainsFunc(names, func(n string) bool { return strings.HasPrefix(n, opt) })
	})
}

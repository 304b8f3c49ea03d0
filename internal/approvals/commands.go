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
	// guessed says argv is one of the places a wrapper's command may start,
	// not known to be the command.
	guessed bool
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
// follows aliases and wrappers (env, nice, timeout, sudo, xargs, setsid...)
// to the command they run, parses the scripts given to shells, eval and
// trap, and checks the rules.
func (c *command) run(argv []string, hops int) {
	a := c.w.a
	if len(argv) == 0 {
		return
	}
	if hops > maxDepth {
		a.add(RuleUnparsable)
		return
	}
	if len(a.custom) > 0 {
		a.matchCustom(strings.Join(argv, " "))
	}
	name := argv[0]
	if leadsComputed(name) || isComputedText(path.Base(name)) {
		a.add(RuleComputedCommand)
		return
	}
	args := argv[1:]
	if value, ok := a.aliases[name]; ok && !a.expanding[name] {
		// As bash does, an alias is not expanded again inside its own
		// expansion (alias ls='ls --color').
		a.expanding[name] = true
		c.alias(value, args)
		delete(a.expanding, name)
	}
	if strings.Contains(name, environment) {
		c.unknownProgram(args, hops)
		return
	}
	if a.downloads && runByPath(name, c.guessed) {
		// A program run by its path in a command that downloads may be
		// what was downloaded.
		a.add(RuleDownloadToShell)
	}
	base := path.Base(name)
	c.processControl(base, args)
	switch spec, ok := wrappers[base]; {
	case ok:
		c.wrapped(base, spec, args, hops)
	case shells[base]:
		c.shell(args)
	case isInterpreter(base):
		c.interpreter(args)
		c.check(base, args, hops)
	case base == "eval":
		c.nested(strings.Join(args, " "))
	case base == "source" || base == ".":
		switch {
		case len(args) > 0 && isComputedText(args[0]):
			c.nested(args[0])
		case len(args) > 0 && a.downloads:
			a.add(RuleDownloadToShell)
		}
	case base == "trap":
		c.trap(args)
	case base == "at" || base == "batch":
		c.stdinScript(false)
	case base == "crontab":
		c.crontab(args)
	case base == "find":
		c.find(args, hops)
	case base == "watch":
		c.watch(args, hops)
	default:
		c.check(base, args, hops)
	}
}

// knownNames are the commands some rule looks at, besides the wrappers,
// shells and interpreters.
var knownNames = map[string]bool{
	"rm": true, "rsync": true, "chmod": true, "chown": true, "chgrp": true, "git": true, "dd": true,
	"mke2fs": true, "mkswap": true, "wipefs": true, "kill": true, "pkill": true, "killall": true,
	"shutdown": true, "reboot": true, "poweroff": true, "halt": true, "systemctl": true, "init": true,
	"telinit": true, "tee": true, "eval": true, "source": true, ".": true, "trap": true, "at": true,
	"batch": true, "crontab": true, "find": true, "watch": true, "renice": true,
	"apt": true, "apt-get": true, "aptitude": true, "dpkg": true, "npm": true, "pnpm": true,
	"yarn": true, "uv": true, "dnf": true, "yum": true, "microdnf": true, "zypper": true, "apk": true,
	"pacman": true, "brew": true, "snap": true, "gem": true, "conda": true, "mamba": true,
}

// known reports whether the word names a command some rule or wrapper
// looks at, or one the rules cannot name (computed, from the environment,
// an alias, a path while the command downloads).
func (a *analysis) known(word string) bool {
	base := path.Base(word)
	_, wrapper := wrappers[base]
	_, alias := a.aliases[word]
	return wrapper || alias || knownNames[base] || shells[base] || isInterpreter(base) || sqlClients[base] ||
		strings.HasPrefix(base, "mkfs") || strings.HasPrefix(base, "pip") ||
		isComputedText(word) || strings.Contains(word, environment) || a.downloads && strings.Contains(word, "/")
}

// runByPath reports whether name runs a program by its path, outside the
// system's own directories (which a download without privileges cannot
// replace). Where a wrapper's command may start (guessed), an operand with
// a slash is more often a file or a URL for the command before it, and
// only a path relative to the working directory (./i.sh) counts.
func runByPath(name string, guessed bool) bool {
	if guessed {
		return strings.HasPrefix(name, "./") || strings.HasPrefix(name, "../")
	}
	if !strings.Contains(name, "/") || strings.Contains(name, "://") {
		return false
	}
	for _, dir := range []string{"/bin/", "/sbin/", "/usr/bin/", "/usr/sbin/", "/usr/libexec/"} {
		if strings.HasPrefix(path.Clean(name), dir) {
			return false
		}
	}
	return true
}

// alias looks at a command named by an alias the command defines: the
// alias's text with the arguments after it, as bash reads it (aliases are
// taken as expanded, whether or not expand_aliases is on).
func (c *command) alias(value string, args []string) {
	c.nested(value + " " + shellQuote(args))
}

// shellQuote joins args, each quoted for the shell.
func shellQuote(args []string) string {
	quoted := make([]string, len(args))
	for i, s := range args {
		quoted[i] = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return strings.Join(quoted, " ")
}

// unknownProgram looks at a command named by a variable from the
// environment ($SHELL, $EDITOR): it may be any program, a shell or a
// wrapper among them. Its -c script is parsed, its operands are followed
// as a wrapper's are, and in a command that downloads, a pipe or a file
// it reads may be the download run as a script.
func (c *command) unknownProgram(args []string, hops int) {
	for _, script := range scriptOptions(args, "c", []string{"--command"}) {
		c.nested(script)
	}
	c.wrapped("", wrapperSpec{}, args, hops)
	if c.w.a.downloads {
		if in := c.stdin(); in.piped || in.file || len(operands(args)) > 0 {
			c.w.a.add(RuleDownloadToShell)
		}
	}
}

// trap looks at the action trap sets, a script the shell runs later: its
// first operand, when a signal follows it.
func (c *command) trap(args []string) {
	ops := operands(args)
	if len(args) > 0 && args[0] == "--" {
		ops = args[1:]
	}
	if len(ops) >= 2 {
		c.nested(ops[0])
	}
}

// stdinScript looks at a script a command reads on its standard input (at
// and batch run it later): a here-document is parsed, a pipe or a file is
// a script known only when it runs.
func (c *command) stdinScript(fileToo bool) {
	in := c.stdin()
	switch {
	case in.hasDoc:
		c.nested(in.doc)
	case in.piped || fileToo && in.file:
		c.computedScript()
	}
}

// crontab looks at a crontab installed from standard input: each entry's
// command is a script cron runs later. One installed from a file is not
// read, as a script run by name is not.
func (c *command) crontab(args []string) {
	if ops := operands(args); len(ops) > 0 && ops[0] != "-" {
		return
	}
	if slices.ContainsFunc(args, func(s string) bool { return s == "-l" || s == "-r" || s == "-e" }) {
		return
	}
	in := c.stdin()
	if !in.hasDoc {
		c.stdinScript(false)
		return
	}
	for _, line := range strings.Split(in.doc, "\n") {
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0 || strings.HasPrefix(fields[0], "#"):
		case strings.HasPrefix(fields[0], "@") && len(fields) > 1:
			c.nested(strings.Join(fields[1:], " "))
		case len(fields) > 5 && !strings.Contains(fields[0], "="):
			c.nested(strings.Join(fields[5:], " "))
		}
	}
}

// processControl checks the commands that change another process's
// limits, scheduling, CPUs or I/O priority, or attach to it: what a
// process of the same user may do to the bot itself.
func (c *command) processControl(base string, args []string) {
	acts := false
	pid := hasOption("p", "--pid")
	switch base {
	case "renice":
		acts = !slices.ContainsFunc(args, func(s string) bool { return s == "--help" || s == "-h" || s == "--version" || s == "-V" })
	case "prlimit":
		// With a pid, a limit given a value is set on that process.
		acts = pid(args) && slices.ContainsFunc(args, func(s string) bool {
			return isComputedText(s) || strings.HasPrefix(s, "--") && strings.Contains(s, "=") && !strings.HasPrefix(s, "--pid=") && !strings.HasPrefix(s, "--output=") ||
				len(s) > 2 && s[0] == '-' && s[1] != '-' && s[1] != 'p' && s[1] != 'o'
		})
	case "taskset", "chrt":
		// -p with one operand shows the setting, with two sets it.
		acts = pid(args) && len(operandsAnywhere(args)) >= 2
	case "ionice":
		acts = hasOption("pPu", "--pid", "--pgid", "--uid")(args) && hasOption("cn", "--class", "--classdata")(args)
	case "choom":
		acts = pid(args) && hasOption("n", "--adjust")(args)
	case "strace", "ltrace":
		acts = hasOption("p", "--attach")(args)
	case "gdb":
		acts = pid(args) || slices.Contains(args, "attach")
	}
	if acts {
		c.w.a.add(RuleProcessControl)
	}
}

// operandsAnywhere returns the arguments that are not options, wherever
// they stand (GNU tools permute them).
func operandsAnywhere(args []string) []string {
	var out []string
	for _, s := range args {
		if !strings.HasPrefix(s, "-") || isComputedText(s) {
			out = append(out, s)
		}
	}
	return out
}

// check applies the rules about one command that runs no other.
func (c *command) check(base string, args []string, hops int) {
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
		c.git(args, hops)
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

// git checks git's subcommands (push with force, reset --hard, clean)
// and the commands git is told to run: configuration keys given with -c,
// --config-env or git config whose value is a command, and the options of
// subcommands that take one (--upload-pack, rebase --exec, bisect run,
// submodule foreach, filter-branch's filters).
func (c *command) git(args []string, hops int) {
	a := c.w.a
	i := 0
	for ; i < len(args); i++ {
		s := args[i]
		if !strings.HasPrefix(s, "-") {
			break
		}
		switch {
		case s == "-c" && i+1 < len(args):
			i++
			key, value, _ := strings.Cut(args[i], "=")
			c.gitConfig(key, value)
		case strings.HasPrefix(s, "-c") && len(s) > 2:
			key, value, _ := strings.Cut(s[2:], "=")
			c.gitConfig(key, value)
		case s == "--config-env" && i+1 < len(args) || strings.HasPrefix(s, "--config-env="):
			spec, ok := strings.CutPrefix(s, "--config-env=")
			if !ok {
				i++
				spec = args[i]
			}
			if key, _, _ := strings.Cut(spec, "="); gitRunsValue(key) != gitPlain {
				a.add(RuleComputedCommand) // the value is a variable's, which the command may set
			}
		case strings.HasPrefix(s, "--exec-path="):
			a.add(RuleComputedCommand) // git runs its subcommands from there
		case s == "-C" || s == "--git-dir" || s == "--work-tree" || s == "--namespace" || s == "--super-prefix" || s == "--attr-source":
			i++
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
	for j, s := range rest {
		if strings.HasPrefix(s, "ext::") || isComputedText(s) && strings.HasPrefix(s, "ext:") {
			a.add(RuleComputedCommand) // the ext transport runs a command
		}
		name, value, hasValue := strings.Cut(s, "=")
		if !hasValue && j+1 < len(rest) {
			value = rest[j+1]
		}
		switch {
		case gitCommandOption(sub, name):
			c.nested(value)
		case sub == "clone" && name == "-u" && j+1 < len(rest):
			c.nested(rest[j+1])
		}
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
	case "config":
		c.gitConfigCommand(rest)
	case "bisect":
		if len(rest) > 1 && rest[0] == "run" {
			c.follow(rest[1:], hops+1)
		}
	case "submodule":
		if k := slices.Index(rest, "foreach"); k >= 0 {
			c.nested(strings.Join(operands(rest[k+1:]), " "))
		}
	}
}

// gitCommandOption reports whether a subcommand's option takes a command
// git runs.
func gitCommandOption(sub, name string) bool {
	switch name {
	case "--upload-pack", "--receive-pack", "--exec":
		return true
	case "-x", "--extcmd":
		return sub == "rebase" || sub == "difftool"
	case "--tree-filter", "--index-filter", "--msg-filter", "--env-filter", "--commit-filter", "--parent-filter", "--tag-name-filter":
		return sub == "filter-branch"
	}
	return false
}

// gitConfigCommand looks at git config setting a key: git config [options]
// key value, and git config set [options] key value.
func (c *command) gitConfigCommand(args []string) {
	ops := operandsAnywhere(args)
	if len(ops) > 0 && ops[0] == "set" {
		ops = ops[1:]
	}
	if len(ops) >= 2 {
		c.gitConfig(ops[0], ops[1])
	}
}

// How git uses a configuration value.
const (
	gitPlain   = iota // data
	gitScript         // a command git runs through the shell
	gitUnknown        // code the rules cannot see: an alias, a file of configuration or of hooks
)

// gitRunsValue says how git uses the value of a configuration key: by the
// key's last part (core.pager, diff.x.textconv, filter.x.smudge) or its
// section (alias.*, pager.*, include.*).
func gitRunsValue(key string) int {
	key = strings.ToLower(key)
	section, _, _ := strings.Cut(key, ".")
	last := key[strings.LastIndex(key, ".")+1:]
	switch {
	case isComputedText(key):
		return gitUnknown
	case section == "alias" || section == "include" || section == "includeif" || last == "hookspath" || last == "path" && (section == "difftool" || section == "mergetool"):
		return gitUnknown
	case section == "pager":
		return gitScript
	}
	switch last {
	case "pager", "editor", "sshcommand", "askpass", "fsmonitor", "gitproxy", "program", "helper",
		"textconv", "command", "cmd", "external", "clean", "smudge", "process", "driver",
		"difffilter", "uploadpack", "receivepack", "packobjectshook", "browser", "sendmailcmd",
		"smtpserver", "httpd", "defaultkeycommand", "alternaterefscommand":
		return gitScript
	}
	return gitPlain
}

// gitConfig looks at one configuration key and its value: a command git
// runs is parsed as a script ("!" starts a shell command in credential
// helpers and aliases), and a key whose code cannot be seen is a computed
// command.
func (c *command) gitConfig(key, value string) {
	switch gitRunsValue(key) {
	case gitScript:
		c.nested(strings.TrimPrefix(value, "!"))
	case gitUnknown:
		c.w.a.add(RuleComputedCommand)
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

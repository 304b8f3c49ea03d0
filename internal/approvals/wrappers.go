package approvals

import (
	"slices"
	"strings"
)

// wrapper returns the command a wrapper runs, from the wrapper's
// arguments; ok is false when it runs none (command -v, ionice -p).
type wrapper func(args []string) (inner []string, ok bool)

// wrappers are the commands that run another command given as their
// operands, with the options that take a value.
var wrappers = map[string]wrapper{
	"env":     envCommand,
	"command": commandBuiltin,
	"builtin": func(args []string) ([]string, bool) { return args, true },
	"exec":    afterOptions("a", nil),
	"nice":    niceCommand,
	"nohup":   afterOptions("", nil),
	"time":    afterOptions("fo", []string{"--format", "--output"}),
	"timeout": timeoutCommand,
	"stdbuf":  afterOptions("ioe", []string{"--input", "--output", "--error"}),
	"ionice":  ioniceCommand,
	"setsid":  afterOptions("", nil),
	"xargs":   afterOptions("adEILnPs", nil),
	"flock":   flockCommand,
	"chroot":  chrootCommand,
}

// optionEnd returns the index of the first operand of args: options are
// skipped, with the value of those in valued (one-letter options, or long
// ones without "=") skipped too; "--" ends them.
func optionEnd(args []string, valued string, valuedLong []string) int {
	for i := 0; i < len(args); i++ {
		s := args[i]
		switch {
		case s == "--":
			return i + 1
		case !strings.HasPrefix(s, "-") || s == "-":
			return i
		case strings.HasPrefix(s, "--"):
			if !strings.Contains(s, "=") && slices.Contains(valuedLong, s) {
				i++
			}
		case len(s) == 2 && strings.ContainsRune(valued, rune(s[1])):
			i++
		}
	}
	return len(args)
}

// afterOptions builds the wrapper whose command is its first operand.
func afterOptions(valued string, valuedLong []string) wrapper {
	return func(args []string) ([]string, bool) {
		return args[optionEnd(args, valued, valuedLong):], true
	}
}

// envCommand follows env: options, NAME=VALUE operands, then the command;
// -S splits a string into arguments.
func envCommand(args []string) ([]string, bool) {
	for i := 0; i < len(args); i++ {
		s := args[i]
		switch {
		case s == "--":
			return skipAssignments(args[i+1:]), true
		case s == "-S" || s == "--split-string":
			if i+1 < len(args) {
				return append(strings.Fields(args[i+1]), skipAssignments(args[i+2:])...), true
			}
			return nil, false
		case strings.HasPrefix(s, "--split-string="):
			return append(strings.Fields(strings.TrimPrefix(s, "--split-string=")), skipAssignments(args[i+1:])...), true
		case strings.HasPrefix(s, "-S"):
			return append(strings.Fields(s[2:]), skipAssignments(args[i+1:])...), true
		case s == "-u" || s == "--unset" || s == "-C" || s == "--chdir":
			i++
		case strings.HasPrefix(s, "-") && s != "-":
		default:
			return skipAssignments(args[i:]), true
		}
	}
	return nil, false
}

// skipAssignments drops env's leading NAME=VALUE operands.
func skipAssignments(args []string) []string {
	for len(args) > 0 && strings.Contains(args[0], "=") && namePrefix.FindString(args[0]) != "" &&
		strings.HasPrefix(args[0][len(namePrefix.FindString(args[0])):], "=") {
		args = args[1:]
	}
	return args
}

// commandBuiltin follows command, which runs nothing with -v or -V.
func commandBuiltin(args []string) ([]string, bool) {
	i := 0
	for ; i < len(args) && strings.HasPrefix(args[i], "-"); i++ {
		if args[i] == "--" {
			i++
			break
		}
		if strings.ContainsAny(args[i], "vV") {
			return nil, false
		}
	}
	return args[i:], true
}

// niceCommand follows nice, whose adjustment may be written -10.
func niceCommand(args []string) ([]string, bool) {
	i := 0
	for ; i < len(args); i++ {
		s := args[i]
		switch {
		case s == "--":
			return args[i+1:], true
		case s == "-n" || s == "--adjustment":
			i++
		case strings.HasPrefix(s, "-"):
		default:
			return args[i:], true
		}
	}
	return nil, false
}

// timeoutCommand follows timeout: options, the duration, the command.
func timeoutCommand(args []string) ([]string, bool) {
	i := optionEnd(args, "sk", []string{"--signal", "--kill-after"})
	if i >= len(args) {
		return nil, false
	}
	return args[i+1:], true
}

// ioniceCommand follows ionice, which runs nothing with -p, -P or -u.
func ioniceCommand(args []string) ([]string, bool) {
	for _, s := range args {
		if s == "-p" || s == "-P" || s == "-u" || s == "--pid" || s == "--pgid" || s == "--uid" {
			return nil, false
		}
	}
	return args[optionEnd(args, "cn", []string{"--class", "--classdata"}):], true
}

// flockCommand follows flock: options, the lock file, then a command or
// -c and a script.
func flockCommand(args []string) ([]string, bool) {
	i := optionEnd(args, "wE", []string{"--timeout", "--conflict-exit-code"})
	if i+1 >= len(args) {
		return nil, false // a file descriptor, no command
	}
	rest := args[i+1:]
	if (rest[0] == "-c" || rest[0] == "--command") && len(rest) > 1 {
		return []string{"sh", "-c", rest[1]}, true
	}
	return rest, true
}

// chrootCommand follows chroot: options, the new root, the command.
func chrootCommand(args []string) ([]string, bool) {
	i := optionEnd(args, "", []string{"--userspec", "--groups"})
	if i+1 >= len(args) {
		return nil, false
	}
	return args[i+1:], true
}

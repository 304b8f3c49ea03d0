package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
)

// runVersion prints the module version, the VCS revision the binary was
// built from (when the build recorded it) and the Go version.
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlagSet("version", "print the version", stderr)
	if code, done := parseFlags(fs, args); done {
		return code
	}
	fmt.Fprintf(stdout, "telegram-bot %s\n", buildVersion())
	return 0
}

// buildVersion describes the build from its embedded build information.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown build) " + runtime.Version()
	}
	v := info.Main.Version
	if v == "" {
		v = "(devel)"
	}
	var rev, modified string
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			if s.Value == "true" {
				modified = "+dirty"
			}
		}
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev != "" {
		v += " " + rev + modified
	}
	return v + " " + info.GoVersion
}

// newFlagSet returns a flag set for a sub-command whose --help prints its
// summary and flags.
func newFlagSet(name, summary string, out io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(out)
	fs.Usage = func() {
		fmt.Fprintf(out, "Usage: telegram-bot %s [flags]\n\n%s\n", name, summary)
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args; done reports that the command should stop with
// code (0 after --help, 2 after a bad flag).
func parseFlags(fs *flag.FlagSet, args []string) (code int, done bool) {
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0, true
		}
		return 2, true
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "telegram-bot %s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		return 2, true
	}
	return 0, false
}

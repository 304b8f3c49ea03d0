package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"
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

// sourceCommit is the commit the binary was built from when the build
// passes it with -ldflags "-X main.sourceCommit=..." (the Dockerfile does,
// from Coolify's SOURCE_COMMIT build argument), because a build without the
// .git directory records no VCS revision. The linker sets it; nothing
// assigns it at run time.
var sourceCommit string

// buildVersion describes the build from its embedded build information and
// sourceCommit.
func buildVersion() string {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "(unknown build) " + runtime.Version()
	}
	return describeBuild(info, sourceCommit)
}

// describeBuild returns "<module version> <revision> <Go version>", leaving
// out what the build did not record: the module version when it is
// "(devel)" and a revision is known, the revision when there is none. The
// revision is the VCS revision the go command recorded (shortened, with
// "+dirty" for a modified tree), else commit (from the build argument) when
// it looks like one; "(devel)" stands alone only when neither is known.
func describeBuild(info *debug.BuildInfo, commit string) string {
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
	if rev == "" && isRevision(commit) {
		rev, modified = commit, ""
	}
	if len(rev) > 12 {
		rev = rev[:12]
	}
	var parts []string
	if v := info.Main.Version; v != "" && (v != "(devel)" || rev == "") {
		parts = append(parts, v)
	}
	if rev != "" {
		parts = append(parts, rev+modified)
	}
	if len(parts) == 0 {
		parts = append(parts, "(devel)")
	}
	return strings.Join(append(parts, info.GoVersion), " ")
}

// isRevision reports whether s looks like a commit hash (4 to 64
// hexadecimal digits), so that an empty or odd build argument is ignored.
func isRevision(s string) bool {
	if len(s) < 4 || len(s) > 64 {
		return false
	}
	return strings.Trim(strings.ToLower(s), "0123456789abcdef") == ""
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

package mcp

import (
	"path/filepath"
	"regexp"
	"slices"
)

// pythonName matches the file name of a Python interpreter: python,
// python3, python3.12.
var pythonName = regexp.MustCompile(`^python(\d+(\.\d+)?)?$`)

// serverEnv is a stdio server's explicit environment: its env entries, and
// what keeps its interpreter from running code the agent can plant, unless
// the entries name the variable themselves (an empty value turns Python's
// off). The server runs in the session's workspace, where the agent writes,
// and holds credentials the agent must not get:
//   - PYTHONNOUSERSITE=1: Python's user site-packages (PYTHONUSERBASE, which
//     the Docker image points into the workspace so that pip install
//     --user works for the agent) is not read, so a .pth file or
//     usercustomize.py planted there does not run at the server's start;
//   - PYTHONSAFEPATH=1 (Python 3.11 and later) for a server started as
//     python -m or python -c: the working directory is not put first on
//     sys.path, so a module of the server's name planted in the workspace
//     does not shadow the installed one. A server started from a script
//     keeps its script's directory on sys.path, where its own modules are.
func serverEnv(sc ServerConfig) map[string]*string {
	out := explicitEnv(sc.Env)
	if out == nil {
		out = map[string]*string{}
	}
	set := func(name, value string) {
		if _, named := sc.Env[name]; !named {
			out[name] = &value
		}
	}
	set("PYTHONNOUSERSITE", "1")
	if pythonName.MatchString(filepath.Base(sc.Command)) && slices.ContainsFunc(leadingOptions(sc.Args), func(a string) bool { return a == "-m" || a == "-c" }) {
		set("PYTHONSAFEPATH", "1")
	}
	return out
}

// leadingOptions returns the arguments before the first that is not an
// option: an interpreter's own options, up to its script.
func leadingOptions(args []string) []string {
	for i := 0; i < len(args); i++ {
		switch a := args[i]; {
		case len(a) < 2 || a[0] != '-':
			return args[:i]
		case a == "-m" || a == "-c":
			return args[:i+1]
		case a == "-X" || a == "-W":
			i++ // the option's value
		}
	}
	return args
}

package mcp

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// pythonName matches the file name of a Python interpreter: python,
// python3, python3.12.
var pythonName = regexp.MustCompile(`^python(\d+(\.\d+)?)?$`)

// serverEnv is a stdio server's explicit environment: its env entries, and
// what keeps its interpreter from running code the agent can plant, unless
// the entries name the variable themselves (an empty value turns Python's
// off). A session's server runs in the workspace (one started with npx in
// its home, see serverCwd), where the agent writes, and holds credentials
// the agent must not get:
//   - PYTHONNOUSERSITE=1: Python's user site-packages (PYTHONUSERBASE, which
//     the Docker image points into the workspace so that pip install
//     --user works for the agent) is not read, so a .pth file or
//     usercustomize.py planted there does not run at the server's start;
//   - PYTHONSAFEPATH=1 (Python 3.11 and later) for a server started as
//     python -m or python -c: the working directory is not put first on
//     sys.path, so a module of the server's name planted in the workspace
//     does not shadow the installed one. A server started from a script
//     keeps its script's directory on sys.path, where its own modules are;
//   - with a server home (see [WithServerHome]), HOME, npm_config_cache,
//     npm_config_prefix, PYTHONUSERBASE and XDG_CACHE_HOME in it, where
//     npm, npx, pip, uv and the like keep the code they run again later:
//     in the workspace (the Docker image points them there) the agent
//     could change it. npm reads its variables in any case, so the
//     upper-case NPM_CONFIG_CACHE and NPM_CONFIG_PREFIX, which would
//     compete with these, are removed; an entry naming either spelling
//     keeps the configuration's setting, with neither spelling added.
func serverEnv(sc ServerConfig, home string) map[string]*string {
	out := explicitEnv(sc.Env)
	if out == nil {
		out = map[string]*string{}
	}
	set := func(name, value string) {
		if _, named := sc.Env[name]; !named {
			out[name] = &value
		}
	}
	// setNPM sets npm's variable in its lower-case spelling, the one npm
	// documents, and removes the upper-case one, unless an entry names
	// either: npm takes both, and two would compete.
	setNPM := func(name, value string) {
		upper := strings.ToUpper(name)
		_, lower := sc.Env[name]
		if _, named := sc.Env[upper]; named || lower {
			return
		}
		out[name] = &value
		out[upper] = nil
	}
	set("PYTHONNOUSERSITE", "1")
	if home != "" {
		set("HOME", home)
		setNPM("npm_config_cache", filepath.Join(home, ".npm"))
		setNPM("npm_config_prefix", filepath.Join(home, ".npm-global"))
		set("PYTHONUSERBASE", filepath.Join(home, ".local"))
		set("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	}
	if pythonName.MatchString(filepath.Base(sc.Command)) && runsModuleOrCommand(sc.Args) {
		set("PYTHONSAFEPATH", "1")
	}
	return out
}

// pythonValueOptions are the short options of Python that take a value,
// in the same argument (-Wignore) or the next (-W ignore).
const pythonValueOptions = "WX"

// runsModuleOrCommand reports whether a Python interpreter started with
// args runs a module (-m) or a command (-c), read as Python reads its
// options: they may be combined (-um srv, -Ic code), and -m and -c may
// hold their value (-msrv). A script, "-" (standard input) or "--" ends
// the options.
func runsModuleOrCommand(args []string) bool {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--" || len(a) < 2 || a[0] != '-':
			return false
		case strings.HasPrefix(a, "--"):
			if a == "--check-hash-based-pycs" {
				i++ // the option's value
			}
			continue
		}
		for j := 1; j < len(a); j++ {
			switch c := a[j]; {
			case c == 'm' || c == 'c':
				return true
			case strings.IndexByte(pythonValueOptions, c) >= 0:
				if j == len(a)-1 {
					i++ // the value is the next argument
				}
				j = len(a) // the rest of the argument is the value
			}
		}
	}
	return false
}

// npmNames are the commands that resolve a package from node_modules under
// their working directory.
var npmNames = []string{"npx", "npm", "pnpm", "yarn", "bunx"}

// serverCwd returns the working directory of a session's server: its home
// for a command of npmNames when there is a home, so that a node_modules
// the agent made in the workspace is not where the command looks; "" (the
// session's workspace) otherwise.
func serverCwd(sc ServerConfig, home string) string {
	if home != "" && slices.Contains(npmNames, filepath.Base(sc.Command)) {
		return home
	}
	return ""
}

// serverPaths returns what a server's sandbox view adds: its configured
// paths, and the server home, made first (mode 0700) when there is one.
func serverPaths(sc ServerConfig, home string, more sandbox.Paths) (sandbox.Paths, error) {
	paths := sc.Sandbox.With(more)
	if home == "" {
		return paths, nil
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return sandbox.Paths{}, fmt.Errorf("making the server home: %w", err)
	}
	return paths.With(sandbox.Paths{Write: []string{home}}), nil
}

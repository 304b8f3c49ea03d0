package mcp

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"

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
//     compete with these, are removed.
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
	unset := func(name string) {
		if _, named := sc.Env[name]; !named {
			out[name] = nil
		}
	}
	set("PYTHONNOUSERSITE", "1")
	if home != "" {
		set("HOME", home)
		set("npm_config_cache", filepath.Join(home, ".npm"))
		set("npm_config_prefix", filepath.Join(home, ".npm-global"))
		unset("NPM_CONFIG_CACHE")
		unset("NPM_CONFIG_PREFIX")
		set("PYTHONUSERBASE", filepath.Join(home, ".local"))
		set("XDG_CACHE_HOME", filepath.Join(home, ".cache"))
	}
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

package mcp

import (
	"os/exec"
	"path/filepath"
	"strings"
)

// scriptExtensions are the endings of an argument that names a script an
// interpreter runs.
var scriptExtensions = []string{".js", ".mjs", ".cjs", ".ts", ".py", ".rb", ".pl", ".sh", ".jar"}

// plantable returns the command or script of a stdio server that lies
// where the agent's processes may write (see [WithAgentWritable]): the
// command as exec resolves it on the bot's PATH, and each argument that
// is written as a path or names a script by its ending, a relative one
// read in the workspace (the first of writable), where a session's server
// runs. The agent could
// replace what it names and have the next session's server run its code,
// with the server's env. "" when there is none.
func plantable(sc ServerConfig, writable []string) string {
	if len(writable) == 0 || sc.Remote() {
		return ""
	}
	inWritable := func(p string) bool {
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		for _, dir := range writable {
			if real, err := filepath.EvalSymlinks(dir); err == nil {
				dir = real
			}
			if rel, err := filepath.Rel(dir, p); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				return true
			}
		}
		return false
	}
	command := sc.Command
	if !strings.Contains(command, "/") {
		if resolved, err := exec.LookPath(command); err == nil {
			command = resolved
		}
	}
	if strings.Contains(command, "/") && inWritable(absIn(writable[0], command)) {
		return sc.Command
	}
	for _, a := range sc.Args {
		// A package name (@scope/pkg) is no path; ./x, /x and x.js are.
		if !isPath(a) && (strings.HasPrefix(a, "-") || strings.HasPrefix(a, "@") || !hasScriptExtension(a)) {
			continue
		}
		if inWritable(absIn(writable[0], a)) {
			return a
		}
	}
	return ""
}

// absIn returns p made absolute against dir when it is relative.
func absIn(dir, p string) string {
	if filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(dir, p)
}

// hasScriptExtension reports whether a names a script by its ending.
func hasScriptExtension(a string) bool {
	for _, ext := range scriptExtensions {
		if strings.HasSuffix(a, ext) {
			return true
		}
	}
	return false
}

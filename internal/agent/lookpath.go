package agent

import (
	"cmp"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
)

// childLookPath resolves a bare command name against the PATH of the child
// environment env, so a child runs what its own PATH finds, not what the
// host's would. A name with a path separator is returned as it is; a child
// environment without PATH falls back to the host's PATH. A name found
// nowhere is an *exec.Error wrapping exec.ErrNotFound.
func childLookPath(name string, env map[string]string) (string, error) {
	if strings.ContainsRune(name, '/') || strings.ContainsRune(name, filepath.Separator) {
		return name, nil
	}
	path, ok := envValue(env, "PATH")
	if !ok {
		return exec.LookPath(name)
	}
	exts := []string{""}
	if runtime.GOOS == "windows" && filepath.Ext(name) == "" {
		pathext, _ := envValue(env, "PATHEXT")
		exts = strings.Split(strings.ToLower(cmp.Or(pathext, ".com;.exe;.bat;.cmd")), ";")
	}
	for _, dir := range filepath.SplitList(path) {
		if dir == "" || !filepath.IsAbs(dir) {
			// A relative entry would resolve against the host's working
			// directory, as exec.LookPath refuses to.
			continue
		}
		for _, ext := range exts {
			candidate := filepath.Join(dir, name+ext)
			if isExecutable(candidate) {
				return candidate, nil
			}
		}
	}
	return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
}

// envValue returns the variable name of env; outside Windows names are
// case-sensitive, on Windows they are not.
func envValue(env map[string]string, name string) (string, bool) {
	if v, ok := env[name]; ok || runtime.GOOS != "windows" {
		return v, ok
	}
	for k, v := range env {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// isExecutable reports whether path is a file a process could be started
// from: a regular file with an execute bit (any file on Windows).
func isExecutable(path string) bool {
	info, err := os.Stat(path)
	if err != nil {
		return false
	}
	if !info.Mode().IsRegular() {
		return false
	}
	return runtime.GOOS == "windows" || info.Mode().Perm()&0o111 != 0
}

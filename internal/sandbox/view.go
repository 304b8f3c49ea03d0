package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// baseSystemDirs are the directories every view reads and executes from,
// when they exist.
var baseSystemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt"}

// kernelDirs are read in every view: /proc (a process's own entries; the
// Landlock domain keeps every other process's out of reach) and /sys.
var kernelDirs = []string{"/proc", "/sys"}

// devDir holds the devices every view reads and writes (/dev/null, a
// terminal, /dev/shm); no device node can be made in it.
const devDir = "/dev"

// prefixTools are the tools whose installation prefix joins the system
// directories when it lies elsewhere (a Node, Python or Go installed under
// a home directory).
var prefixTools = []string{"node", "npm", "npx", "python3", "python", "go"}

// Paths are directories or files added to a view: Read ones are readable
// and executable, Write ones readable, writable and executable.
type Paths struct {
	Read  []string `json:"read,omitempty"`
	Write []string `json:"write,omitempty"`
}

// With returns p with more's paths added.
func (p Paths) With(more Paths) Paths {
	return Paths{
		Read:  append(slices.Clone(p.Read), more.Read...),
		Write: append(slices.Clone(p.Write), more.Write...),
	}
}

// View is what a sandboxed process may reach: read, write and execute in
// the workspace, the temporary directory and Paths.Write; read and execute
// in the system directories and Paths.Read. Everything else (the bot's
// state, its configuration, its home unless that is the workspace) is out
// of reach. All paths are absolute.
type View struct {
	// Workspace is the agent's working directory.
	Workspace string `json:"workspace"`
	// Temp is the temporary directory (TMPDIR of every sandboxed process).
	Temp string `json:"temp"`
	// System are the read-only system directories.
	System []string `json:"system"`
	// Extra are the operator's additions (AGENT_SANDBOX_READ and
	// AGENT_SANDBOX_WRITE, and an MCP server's own paths).
	Extra Paths `json:"extra"`
}

// SystemDirs returns the read-only system directories of a view: /usr,
// /bin, /sbin, /lib*, /etc and /opt where they exist, and the installation
// prefix of node, npm, python3 and go (the directory above the one holding
// the resolved executable) where it lies outside them. lookPath finds an
// executable (exec.LookPath on the PATH the agent's processes get); nil
// skips the prefixes.
func SystemDirs(lookPath func(string) (string, error)) []string {
	var dirs []string
	for _, d := range baseSystemDirs {
		if _, err := os.Lstat(d); err == nil {
			dirs = append(dirs, d)
		}
	}
	// On a host where /etc/resolv.conf links into systemd's runtime
	// directory, name resolution needs that directory too.
	if target, err := filepath.EvalSymlinks("/etc/resolv.conf"); err == nil && !within(target, dirs) {
		dirs = append(dirs, filepath.Dir(target))
	}
	if lookPath == nil {
		return dirs
	}
	for _, tool := range prefixTools {
		p, err := lookPath(tool)
		if err != nil {
			continue
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			p = real
		}
		prefix := filepath.Dir(filepath.Dir(p))
		if prefix == "/" || within(prefix, dirs) {
			continue
		}
		dirs = append(dirs, prefix)
	}
	return dirs
}

// With returns a copy of v with extra added to its Extra paths.
func (v View) With(extra Paths) View {
	out := v
	out.System = slices.Clone(v.System)
	out.Extra = v.Extra.With(extra)
	return out
}

// Validate reports every problem of v at once: a missing workspace or
// temporary directory, and a path that is not absolute.
func (v View) Validate() error {
	var problems []error
	if v.Workspace == "" {
		problems = append(problems, errors.New("sandbox: the view has no workspace"))
	}
	if v.Temp == "" {
		problems = append(problems, errors.New("sandbox: the view has no temporary directory"))
	}
	for _, p := range v.all() {
		if p.path != "" && !filepath.IsAbs(p.path) {
			problems = append(problems, fmt.Errorf("sandbox: %s path %q is not absolute", p.role, p.path))
		}
	}
	return errors.Join(problems...)
}

// Hide checks that none of hidden (a name, such as AGENT_DIR, for each
// path) lies inside what v grants, and reports each one that does: a
// Landlock view grants whole trees and cannot take a part of one away.
func (v View) Hide(hidden map[string]string) error {
	names := slices.Sorted(func(yield func(string) bool) {
		for name := range hidden {
			if !yield(name) {
				return
			}
		}
	})
	var problems []error
	for _, name := range names {
		path := hidden[name]
		if path == "" {
			continue
		}
		if g, ok := v.granting(path); ok {
			problems = append(problems, fmt.Errorf(
				"sandbox: %s (%s) is inside the %s %s, which agent processes can reach: the sandbox could not hide it; move one of them", name, path, g.role, g.path))
		}
	}
	return errors.Join(problems...)
}

// Summary is the view in a few words, for the start-up line and the doctor:
// "workspace rw, system ro", and the operator's additions when there are
// any.
func (v View) Summary() string {
	s := "workspace rw, system ro"
	if n := len(v.Extra.Read); n > 0 {
		s += fmt.Sprintf(", %d more ro", n)
	}
	if n := len(v.Extra.Write); n > 0 {
		s += fmt.Sprintf(", %d more rw", n)
	}
	return s
}

// Lines describes every path of v with its access, one per line, for the
// doctor.
func (v View) Lines() []string {
	var out []string
	for _, p := range v.all() {
		access := "ro"
		if p.write {
			access = "rw"
		}
		out = append(out, fmt.Sprintf("%s %s (%s)", access, p.path, p.role))
	}
	return out
}

// grant is one path of a view.
type grant struct {
	path  string
	role  string
	write bool
}

// all lists v's paths, writable ones first.
func (v View) all() []grant {
	out := []grant{{v.Workspace, "workspace", true}, {v.Temp, "temporary directory", true}}
	for _, p := range v.Extra.Write {
		out = append(out, grant{p, "writable addition", true})
	}
	for _, p := range v.System {
		out = append(out, grant{p, "system directory", false})
	}
	for _, p := range v.Extra.Read {
		out = append(out, grant{p, "readable addition", false})
	}
	for _, p := range kernelDirs {
		out = append(out, grant{p, "kernel interface", false})
	}
	out = append(out, grant{devDir, "devices", true})
	return out
}

// granting returns the grant of v that path lies in (compared both as
// written and with symbolic links resolved).
func (v View) granting(path string) (grant, bool) {
	forms := []string{filepath.Clean(path)}
	if real, err := filepath.EvalSymlinks(path); err == nil && real != forms[0] {
		forms = append(forms, real)
	}
	for _, g := range v.all() {
		if g.path == "" {
			continue
		}
		roots := []string{filepath.Clean(g.path)}
		if real, err := filepath.EvalSymlinks(g.path); err == nil && real != roots[0] {
			roots = append(roots, real)
		}
		for _, f := range forms {
			if within(f, roots) {
				return g, true
			}
		}
	}
	return grant{}, false
}

// within reports whether path is one of dirs or lies beneath one.
func within(path string, dirs []string) bool {
	for _, d := range dirs {
		if path == d || d == "/" || strings.HasPrefix(path, strings.TrimSuffix(d, "/")+"/") {
			return true
		}
	}
	return false
}

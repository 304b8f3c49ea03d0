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
	// Hidden are paths inside a read-only tree of the view that stay out
	// of reach all the same (an MCP configuration under /etc): see
	// [View.Hide].
	Hidden []string `json:"hidden,omitempty"`
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
	out.Hidden = slices.Clone(v.Hidden)
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

// Hide returns v with each of hidden (a name, such as AGENT_DIR, for each
// path) kept out of reach. A path inside a read-only tree of the view (a
// system directory, a readable addition) is carved out of it: the tree is
// granted entry by entry around it, and the file tools refuse it. A path
// inside a writable tree, the kernel interfaces or the devices, or one that
// is a granted tree itself, cannot be hidden and is an error: the agent
// could rename or replace what leads to it.
func (v View) Hide(hidden map[string]string) (View, error) {
	names := slices.Sorted(func(yield func(string) bool) {
		for name := range hidden {
			if !yield(name) {
				return
			}
		}
	})
	out := v.With(Paths{})
	out.Hidden = slices.Clone(v.Hidden)
	var problems []error
	for _, name := range names {
		path := hidden[name]
		if path == "" {
			continue
		}
		g, ok := v.granting(path)
		if !ok {
			continue
		}
		clean := filepath.Clean(path)
		if g.write || !g.carvable || clean == filepath.Clean(g.path) {
			problems = append(problems, fmt.Errorf(
				"sandbox: %s (%s) is inside the %s %s, which agent processes can reach: the sandbox could not hide it; move one of them", name, path, g.role, g.path))
			continue
		}
		out.Hidden = append(out.Hidden, clean)
		if real, err := filepath.EvalSymlinks(path); err == nil && real != clean {
			out.Hidden = append(out.Hidden, real)
		}
	}
	return out, errors.Join(problems...)
}

// hides reports whether path is one of v's hidden paths or lies beneath
// one.
func (v View) hides(path string) bool { return within(path, v.Hidden) }

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
	for _, h := range v.Hidden {
		out = append(out, fmt.Sprintf("hidden %s (carved out of its tree)", h))
	}
	return out
}

// grant is one path of a view.
type grant struct {
	path  string
	role  string
	write bool
	// carvable trees may have hidden paths carved out of them.
	carvable bool
}

// all lists v's paths, writable ones first.
func (v View) all() []grant {
	out := []grant{{v.Workspace, "workspace", true, false}, {v.Temp, "temporary directory", true, false}}
	for _, p := range v.Extra.Write {
		out = append(out, grant{p, "writable addition", true, false})
	}
	for _, p := range v.System {
		out = append(out, grant{p, "system directory", false, true})
	}
	for _, p := range v.Extra.Read {
		out = append(out, grant{p, "readable addition", false, true})
	}
	for _, p := range kernelDirs {
		out = append(out, grant{p, "kernel interface", false, false})
	}
	out = append(out, grant{devDir, "devices", true, false})
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

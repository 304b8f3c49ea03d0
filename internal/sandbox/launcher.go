package sandbox

import (
	"fmt"
	"path/filepath"
)

// LaunchArg is the hidden argument that starts the bot's binary in launcher
// mode: argv is [executable, LaunchArg, <fd>], and the command to start
// comes through the inherited file descriptor <fd>.
const LaunchArg = "__agent-sandbox-launch"

// spec is what the launcher gets through its file descriptor: the command
// to start, and the view to confine it to.
type spec struct {
	Path string   `json:"path"`
	Args []string `json:"args"`
	Env  []string `json:"env"`
	Dir  string   `json:"dir"`
	View View     `json:"view"`
	// Parent is the bot's pid: a SIGTERM that arrives once the launcher's
	// parent is no longer it is the parent-death signal.
	Parent int `json:"parent"`
	// ExtraFiles is how many descriptors, from 3 on, the command inherits.
	ExtraFiles int `json:"extra_files"`
}

// Launcher starts commands inside the sandbox by re-executing the bot's own
// binary in launcher mode. It is immutable and safe for concurrent use.
type Launcher struct {
	executable string
	view       View
}

// NewLauncher returns a launcher that re-executes executable (the bot's
// binary, whose main calls [Launch] when [IsLaunch] says so) and confines
// every command to view. The view must be valid.
func NewLauncher(executable string, view View) (*Launcher, error) {
	if !filepath.IsAbs(executable) {
		return nil, fmt.Errorf("sandbox: the launcher %q is not an absolute path", executable)
	}
	if err := view.Validate(); err != nil {
		return nil, err
	}
	return &Launcher{executable: executable, view: view.With(Paths{})}, nil
}

// View returns the view every command is confined to (before a spawn's own
// additions).
func (l *Launcher) View() View { return l.view.With(Paths{}) }

// Executable returns the binary the launcher re-executes.
func (l *Launcher) Executable() string { return l.executable }

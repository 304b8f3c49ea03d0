package sandbox

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
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
	// Relay is set when the command runs as the agent's ids ([WithSpawner]):
	// the descriptor after the command's extra files is the socket to the
	// agent-side launcher, which this launcher hands the command to.
	Relay bool `json:"relay,omitempty"`
}

// relayed returns how many descriptors the launcher holds besides the
// command's: the agent-side launcher's socket when it relays.
func (s spec) relayed() int {
	if s.Relay {
		return 1
	}
	return 0
}

// Launcher starts commands inside the sandbox by re-executing the bot's own
// binary in launcher mode. It is safe for concurrent use. With [WithWarm]
// it holds a launcher process started ahead of time; [Launcher.Close]
// ends it.
type Launcher struct {
	executable string
	view       View
	// warm keeps one launcher started ahead ([WithWarm]).
	warm bool
	// startWarm starts the warm launcher's command: cmd.Start, or what a
	// test puts in its place (withWarmStart).
	startWarm func(cmd *exec.Cmd) error
	pool      pool
	// agents are the agent-side launchers, with a Spawner ([WithSpawner]).
	agents agents
}

// Option configures a [Launcher].
type Option func(*Launcher)

// WithWarm makes the launcher keep one launcher process started ahead and
// waiting for its command, so that a command started with
// [Launcher.Start] does not wait for the launcher's own start (the Go
// runtime's). Each is used for one command, with a Landlock domain of its
// own, and a replacement is started as soon as it is taken. Close the
// launcher when done with it.
func WithWarm() Option { return func(l *Launcher) { l.warm = true } }

// withWarmStart starts the warm launcher with start instead of
// cmd.Start: tests start it as the unprivileged user.
func withWarmStart(start func(cmd *exec.Cmd) error) Option {
	return func(l *Launcher) { l.startWarm = start }
}

// NewLauncher returns a launcher that re-executes executable (the bot's
// binary, whose main calls [Launch] when [IsLaunch] says so) and confines
// every command to view. The view must be valid.
func NewLauncher(executable string, view View, opts ...Option) (*Launcher, error) {
	if !filepath.IsAbs(executable) {
		return nil, fmt.Errorf("sandbox: the launcher %q is not an absolute path", executable)
	}
	if err := view.Validate(); err != nil {
		return nil, err
	}
	l := &Launcher{executable: executable, view: view.With(Paths{}), startWarm: (*exec.Cmd).Start}
	for _, o := range opts {
		o(l)
	}
	l.refill()
	return l, nil
}

// View returns the view every command is confined to (before a spawn's own
// additions).
func (l *Launcher) View() View { return l.view.With(Paths{}) }

// Warm reports whether the launcher keeps one started ahead ([WithWarm]).
func (l *Launcher) Warm() bool { return l.warm }

// Executable returns the binary the launcher re-executes.
func (l *Launcher) Executable() string { return l.executable }

// IDs are a uid and a gid.
type IDs struct {
	UID, GID int
}

// String returns "uid:gid".
func (i IDs) String() string { return strconv.Itoa(i.UID) + ":" + strconv.Itoa(i.GID) }

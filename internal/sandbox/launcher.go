package sandbox

import (
	"errors"
	"fmt"
	"os/exec"
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
	// NoProcessFilter leaves out the seccomp filter on calls on other
	// processes: only the benchmark of the filter's cost sets it
	// (withoutProcessFilter).
	NoProcessFilter bool `json:"no_process_filter,omitempty"`
	// Egress, when set, confines the command's network to the egress
	// proxy (WithEgress).
	Egress *Egress `json:"egress,omitempty"`
	// EgressTier is the tier the launcher confines the network at.
	EgressTier EgressTier `json:"egress_tier,omitempty"`
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
	// noProcessFilter: see spec.NoProcessFilter.
	noProcessFilter bool
	// egress confines the commands' network to the egress proxy
	// (WithEgress), at egressTier.
	egress     *Egress
	egressTier EgressTier
	// egressShort is why a better tier is out of reach.
	egressShort error
	// egressAtMost caps the tier (withEgressAtMost): tests of a lower
	// tier on a kernel that offers a higher one.
	egressAtMost EgressTier
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

// withoutProcessFilter makes the launcher leave out the seccomp filter on
// calls on other processes, so that a benchmark can measure its cost.
func withoutProcessFilter() Option { return func(l *Launcher) { l.noProcessFilter = true } }

// withEgressAtMost makes [WithEgress] use tier at most.
func withEgressAtMost(tier EgressTier) Option { return func(l *Launcher) { l.egressAtMost = tier } }

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
	if l.egress != nil {
		if l.egress.ProxyPort == 0 {
			return nil, errors.New("sandbox: the egress proxy has no port")
		}
		tier, err := DetectEgress(l.executable)
		if l.egressAtMost != EgressNone && tier > l.egressAtMost {
			tier = l.egressAtMost
		}
		if tier == EgressNone {
			return nil, fmt.Errorf("sandbox: agent processes' network cannot be confined to the egress proxy: %w", err)
		}
		l.egressTier, l.egressShort = tier, err
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

//go:build linux

package sandbox

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"syscall"

	"golang.org/x/sys/unix"
)

// Wrap rewrites cmd, whose Path, Args, Dir, Env and ExtraFiles are final,
// so that starting it starts the launcher, which starts the original
// command confined to the launcher's view plus extra. The command's
// context goes into a sealed memory file the launcher inherits as one more
// descriptor; the launcher itself gets an empty environment and an argv
// that holds only that descriptor's number. The launcher gets SIGTERM when
// the bot dies. Call Wrap before the spawner sets its process group
// (procgroup.Set keeps what Wrap set). When the context cannot be handed
// over, cmd.Err is set, so cmd.Start fails instead of starting the command
// unconfined. Start the command with [Launcher.Start].
func (l *Launcher) Wrap(cmd *exec.Cmd, extra Paths) {
	if cmd.Err != nil {
		return
	}
	s := spec{
		Path:       cmd.Path,
		Args:       cmd.Args,
		Env:        cmd.Env,
		Dir:        cmd.Dir,
		View:       l.view.With(extra),
		Parent:     os.Getpid(),
		ExtraFiles: len(cmd.ExtraFiles),

		NoProcessFilter: l.noProcessFilter,
		Egress:          l.egress,
		EgressTier:      l.egressTier,
	}
	if s.Env == nil {
		// The caller forgot ApplyTo: an empty environment, never the bot's.
		s.Env = []string{}
	}
	f, err := specFile(s)
	if err != nil {
		cmd.Err = fmt.Errorf("sandbox: hand the command to the launcher: %w", err)
		return
	}
	fd := 3 + len(cmd.ExtraFiles)
	cmd.ExtraFiles = append(cmd.ExtraFiles, f)
	cmd.Path = l.executable
	cmd.Args = []string{l.executable, LaunchArg, strconv.Itoa(fd)}
	cmd.Env = launcherEnv()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig = syscall.SIGTERM
}

// launcherEnv is the launcher's own environment: nothing of the bot's, and
// a Go runtime tuned for a process that only waits (one P, no collector).
func launcherEnv() []string { return []string{"GOMAXPROCS=1", "GOGC=off"} }

// specFile writes s into a sealed, close-on-exec memory file positioned at
// its start. [Launcher.Start] closes the bot's copy once the launcher has
// its own (a command started with cmd.Start alone keeps it until the
// *os.File is collected); the launcher closes its own as soon as it has
// read it.
func specFile(s spec) (*os.File, error) {
	data, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	fd, err := unix.MemfdCreate("agent-sandbox-spec", unix.MFD_CLOEXEC|unix.MFD_ALLOW_SEALING)
	if err != nil {
		return nil, fmt.Errorf("memfd_create: %w", err)
	}
	f := os.NewFile(uintptr(fd), "agent-sandbox-spec")
	if _, err := f.Write(data); err != nil {
		f.Close()
		return nil, err
	}
	if _, err := unix.FcntlInt(f.Fd(), unix.F_ADD_SEALS, unix.F_SEAL_SEAL|unix.F_SEAL_SHRINK|unix.F_SEAL_GROW|unix.F_SEAL_WRITE); err != nil {
		f.Close()
		return nil, fmt.Errorf("seal: %w", err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

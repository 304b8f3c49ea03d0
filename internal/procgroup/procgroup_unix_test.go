//go:build unix

package procgroup_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/volcanic/telegram-agent/internal/asusertest"
	"github.com/volcanic/telegram-agent/internal/procgroup"
)

// grace is the SIGTERM grace the tests give: long enough for a shell to
// run its TERM trap before the SIGKILL, on however slow a machine.
const grace = time.Second

// hangGuard is how long a test waits for an event before it gives up: a
// guard against a hang, never a measure of speed.
const hangGuard = 30 * time.Second

// termMarker is the file, in the shell's working directory, where a script
// records each SIGTERM it gets.
const termMarker = "term.marker"

// started is a shell that runs in its own group and has put a grandchild
// (sleep 1000) in the background.
type started struct {
	cmd        *exec.Cmd
	dir        string
	grandchild int
	done       chan error
	// gone is closed once every process holding the pipe the shell got as
	// fd 3 has ended: the shell and all it started, the grandchild
	// included.
	gone chan struct{}
}

// start runs script (which must print the grandchild's pid first) with
// bash -c, through Set, in a fresh directory, and waits for the pid.
// withContext makes the command with exec.CommandContext(ctx).
func start(ctx context.Context, t *testing.T, script string, withContext bool) *started {
	t.Helper()
	var cmd *exec.Cmd
	if withContext {
		cmd = exec.CommandContext(ctx, "bash", "-c", script)
	} else {
		cmd = exec.Command("bash", "-c", script)
	}
	procgroup.Set(cmd)
	cmd.Dir = t.TempDir()
	cmd.Env = []string{"PATH=" + os.Getenv("PATH")}
	held, holder, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.ExtraFiles = []*os.File{holder}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	err = cmd.Start()
	holder.Close()
	if err != nil {
		held.Close()
		t.Fatalf("starting bash: %v", err)
	}
	s := &started{cmd: cmd, dir: cmd.Dir, done: make(chan error, 1), gone: make(chan struct{})}
	t.Cleanup(func() { _ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL) })
	go func() {
		defer close(s.gone)
		defer held.Close()
		_, _ = io.Copy(io.Discard, held) // EOF once every holder ended
	}()
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("reading the grandchild's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("grandchild pid %q: %v", line, err)
	}
	s.grandchild = pid
	go func() { s.done <- cmd.Wait() }()
	return s
}

// signalled returns the signal that ended the shell, from its Wait error.
func signalled(err error) string {
	var exitErr *exec.ExitError
	if !errors.As(err, &exitErr) {
		return fmt.Sprintf("not a signal: %v", err)
	}
	status, ok := exitErr.Sys().(syscall.WaitStatus)
	if !ok || !status.Signaled() {
		return "exited: " + exitErr.String()
	}
	return unix.SignalName(status.Signal())
}

// TestGroupEnds checks that every way of ending a command ends its whole
// group, the shell and the sleep it left in the background, with the
// signals it promises: SIGTERM first for Stop, which the shell's trap
// records, and SIGKILL only for a group that outlives the grace.
func TestGroupEnds(t *testing.T) {
	const background = `sleep 1000 & echo $!; wait`
	// ignoresTerm's background sleep ignores SIGTERM; the shell records
	// it and goes on waiting.
	const ignoresTerm = `trap '' TERM; sleep 1000 & trap 'echo TERM >> ` + termMarker + `' TERM; echo $!; while :; do wait; done`
	tests := []struct {
		name   string
		script string
		// withContext makes the command with exec.CommandContext, whose
		// context end is the action.
		withContext bool
		end         func(s *started, cancel context.CancelFunc)
		// wantSignal is the signal that ended the shell; wantMarker what
		// its TERM trap recorded.
		wantSignal, wantMarker string
	}{
		{name: "Stop", script: background, wantSignal: "SIGTERM",
			end: func(s *started, _ context.CancelFunc) { procgroup.Stop(s.cmd, grace) }},
		{name: "Stop after the grace", script: ignoresTerm, wantSignal: "SIGKILL", wantMarker: "TERM\n",
			end: func(s *started, _ context.CancelFunc) { procgroup.Stop(s.cmd, grace) }},
		{name: "Terminate", script: background, wantSignal: "SIGTERM",
			end: func(s *started, _ context.CancelFunc) { procgroup.Terminate(s.cmd) }},
		{name: "Kill", script: ignoresTerm, wantSignal: "SIGKILL",
			end: func(s *started, _ context.CancelFunc) { procgroup.Kill(s.cmd) }},
		{name: "context cancel", script: ignoresTerm, withContext: true, wantSignal: "SIGKILL",
			end: func(_ *started, cancel context.CancelFunc) { cancel() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			s := start(ctx, t, tt.script, tt.withContext)
			if !asusertest.Alive(s.grandchild) {
				t.Fatal("the grandchild is not running")
			}
			tt.end(s, cancel)
			var waitErr error
			select {
			case waitErr = <-s.done:
			case <-time.After(hangGuard):
				t.Fatal("the shell did not end")
			}
			select {
			case <-s.gone:
			case <-time.After(hangGuard):
				t.Fatalf("the grandchild %d outlived its group", s.grandchild)
			}
			if got := signalled(waitErr); got != tt.wantSignal {
				t.Errorf("the shell ended with %s, want %s", got, tt.wantSignal)
			}
			marker, err := os.ReadFile(filepath.Join(s.dir, termMarker))
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.wantMarker, string(marker)); diff != "" {
				t.Errorf("SIGTERMs the shell recorded (-want +got):\n%s", diff)
			}
		})
	}
}

// TestKillAfterWait checks that Kill reaches what a shell left behind after
// the shell itself was waited for.
func TestKillAfterWait(t *testing.T) {
	s := start(t.Context(), t, `sleep 1000 >/dev/null & echo $!`, false)
	if err := <-s.done; err != nil {
		t.Fatalf("bash: %v", err)
	}
	if !asusertest.Alive(s.grandchild) {
		t.Fatal("the grandchild is not running")
	}
	procgroup.Kill(s.cmd)
	select {
	case <-s.gone:
	case <-time.After(hangGuard):
		t.Errorf("the grandchild %d outlived Kill", s.grandchild)
	}
}

// TestNotStarted checks that the calls leave a command that never started
// alone, and that Set keeps a plain exec.Command startable (no Cancel).
func TestNotStarted(t *testing.T) {
	tests := []struct {
		name string
		call func(cmd *exec.Cmd)
	}{
		{name: "Terminate", call: procgroup.Terminate},
		{name: "Kill", call: procgroup.Kill},
		{name: "Stop", call: func(cmd *exec.Cmd) { procgroup.Stop(cmd, grace) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("true")
			procgroup.Set(cmd)
			tt.call(cmd)
			if cmd.Cancel != nil {
				t.Error("Set gave a plain exec.Command a Cancel, which Start refuses")
			}
			if err := cmd.Run(); err != nil {
				t.Errorf("running true after %s: %v", tt.name, err)
			}
		})
	}
}

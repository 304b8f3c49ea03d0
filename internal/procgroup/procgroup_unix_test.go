//go:build unix

package procgroup_test

import (
	"bufio"
	"context"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/volcanic/telegram-agent/internal/procgroup"
)

// grace is the SIGTERM grace the tests give; generous, so a slow machine
// does not fail them, and short enough to keep them quick.
const grace = 300 * time.Millisecond

// started is a shell that runs in its own group and has put a grandchild
// (sleep 1000) in the background.
type started struct {
	cmd        *exec.Cmd
	grandchild int
	done       chan error
}

// start runs script (which must print the grandchild's pid first) with
// bash -c, through Set, and waits for the pid. withContext makes the
// command with exec.CommandContext(ctx).
func start(ctx context.Context, t *testing.T, script string, withContext bool) *started {
	t.Helper()
	var cmd *exec.Cmd
	if withContext {
		cmd = exec.CommandContext(ctx, "bash", "-c", script)
	} else {
		cmd = exec.Command("bash", "-c", script)
	}
	procgroup.Set(cmd)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting bash: %v", err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("reading the grandchild's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("grandchild pid %q: %v", line, err)
	}
	s := &started{cmd: cmd, grandchild: pid, done: make(chan error, 1)}
	t.Cleanup(func() { _ = unix.Kill(-cmd.Process.Pid, unix.SIGKILL) })
	go func() { s.done <- cmd.Wait() }()
	return s
}

// alive reports whether pid is a live process (a zombie nobody reaps
// counts as dead).
func alive(pid int) bool {
	if data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
		s := string(data)
		f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		return len(f) > 0 && f[0] != "Z"
	} else if !errors.Is(err, os.ErrNotExist) {
		return unix.Kill(pid, 0) == nil
	}
	return false
}

// waitDead waits up to d for pid to die.
func waitDead(pid int, d time.Duration) bool {
	deadline := time.Now().Add(d)
	for alive(pid) {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(10 * time.Millisecond)
	}
	return true
}

// TestGroupEnds checks that every way of ending a command ends its whole
// group: the shell and the sleep it left in the background.
func TestGroupEnds(t *testing.T) {
	const background = `sleep 1000 & echo $!; wait`
	const ignoresTerm = `trap '' TERM; sleep 1000 & echo $!; while :; do sleep 0.05; done`
	tests := []struct {
		name   string
		script string
		// withContext makes the command with exec.CommandContext, whose
		// context end is the action.
		withContext bool
		end         func(s *started, cancel context.CancelFunc)
		// minTime is how long the end must at least take (the grace, for
		// a group that ignores SIGTERM).
		minTime time.Duration
	}{
		{name: "Stop", script: background, end: func(s *started, _ context.CancelFunc) { procgroup.Stop(s.cmd, grace) }},
		{name: "Stop after the grace", script: ignoresTerm, minTime: grace,
			end: func(s *started, _ context.CancelFunc) { procgroup.Stop(s.cmd, grace) }},
		{name: "Terminate", script: background, end: func(s *started, _ context.CancelFunc) { procgroup.Terminate(s.cmd) }},
		{name: "Kill", script: ignoresTerm, end: func(s *started, _ context.CancelFunc) { procgroup.Kill(s.cmd) }},
		{name: "context cancel", script: ignoresTerm, withContext: true,
			end: func(_ *started, cancel context.CancelFunc) { cancel() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(t.Context())
			defer cancel()
			s := start(ctx, t, tt.script, tt.withContext)
			if !alive(s.grandchild) {
				t.Fatal("the grandchild is not running")
			}
			began := time.Now()
			tt.end(s, cancel)
			select {
			case <-s.done:
			case <-time.After(10 * time.Second):
				t.Fatal("the shell did not end")
			}
			if took := time.Since(began); took < tt.minTime {
				t.Errorf("ending took %s, want at least %s", took, tt.minTime)
			}
			if !waitDead(s.grandchild, 5*time.Second) {
				t.Errorf("the grandchild %d outlived its group", s.grandchild)
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
	if !alive(s.grandchild) {
		t.Fatal("the grandchild is not running")
	}
	procgroup.Kill(s.cmd)
	if !waitDead(s.grandchild, 5*time.Second) {
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

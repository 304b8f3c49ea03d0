package sandbox_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/volcanic/telegram-agent/internal/asusertest"
	"github.com/volcanic/telegram-agent/internal/procgroup"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// TestWarmLauncherEndsAsCold: a command ends the same way through the
// launcher started ahead as through a launcher started for it: its exit
// code, the signal it died of, a signal sent to the launcher and passed
// on.
func TestWarmLauncherEndsAsCold(t *testing.T) {
	l := newWarmLayout(t, sandbox.Paths{})
	cold, err := newLauncher(t, l.launcher.Executable(), l.launcher.View(), false)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, script string
		// signal, when set, is sent to the launcher once the command said
		// ready (before the script, unless the script says it).
		signal unix.Signal
		want   string
	}{
		{name: "exit 0", script: `exit 0`, want: "exit status 0"},
		{name: "exit 3", script: `exit 3`, want: "exit status 3"},
		{name: "exit 255", script: `exit 255`, want: "exit status 255"},
		{name: "killed by SIGTERM", script: `kill -TERM $$`, want: "signal: terminated"},
		{name: "killed by SIGKILL", script: `kill -KILL $$`, want: "signal: killed"},
		{name: "killed by SIGSEGV", script: `kill -SEGV $$`},
		{name: "SIGINT to the launcher", script: `exec sleep 1000`, signal: unix.SIGINT, want: "signal: interrupt"},
		{name: "SIGHUP to the launcher", script: `exec sleep 1000`, signal: unix.SIGHUP, want: "signal: hangup"},
		{name: "SIGTERM to the launcher, trapped", script: `trap 'exit 7' TERM; echo ready; sleep 1000 & wait`, signal: unix.SIGTERM, want: "exit status 7"},
	}
	end := func(t *testing.T, launcher *sandbox.Launcher, script string, sig unix.Signal) (ending string, warm bool) {
		ll := &layout{root: l.root, agentDir: l.agentDir, workspace: l.workspace, temp: l.temp, launcher: launcher}
		ll.settle(t)
		ahead := 0
		if launcher.Warm() {
			ahead = sandbox.WarmPid(launcher)
		}
		ready, w, err := os.Pipe()
		if err != nil {
			t.Fatal(err)
		}
		defer ready.Close()
		if !strings.Contains(script, "echo ready") {
			script = `echo ready; ` + script
		}
		cmd := ll.command(script, true)
		cmd.Stdout = w
		err = ll.start(t, cmd)
		w.Close()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { procgroup.Kill(cmd) })
		buf := make([]byte, 6)
		if _, err := ready.Read(buf); err != nil {
			t.Fatalf("the command did not start: %v", err)
		}
		if sig != 0 {
			if err := cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
		}
		_ = cmd.Wait()
		ll.settle(t)
		return cmd.ProcessState.String(), ahead != 0 && cmd.Process.Pid == ahead
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.signal != 0 && signal.Ignored(tt.signal) {
				// Ignored from the start (nohup ignores SIGHUP), the signal
				// is ignored by the launchers and commands this process
				// starts too, and nothing dies of it.
				t.Skipf("the test process inherited %v ignored (run under nohup?)", tt.signal)
			}
			want, _ := end(t, cold, tt.script, tt.signal)
			if tt.want != "" && want != tt.want {
				t.Errorf("cold: %s, want %s", want, tt.want)
			}
			got, warm := end(t, l.launcher, tt.script, tt.signal)
			if !warm {
				t.Error("the command did not go to the launcher started ahead")
			}
			if got != want {
				t.Errorf("warm: %s, cold: %s", got, want)
			}
		})
	}
}

// TestWarmLauncherCloseWhileStarting: Close while commands are being
// started, some by the launcher started ahead: each command runs exactly
// once, and no launcher is left once Close and the commands are done.
func TestWarmLauncherCloseWhileStarting(t *testing.T) {
	l := newWarmLayout(t, sandbox.Paths{})
	l.settle(t)
	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	started := make(chan struct{}, n)
	for i := range n {
		wg.Go(func() {
			cmd := l.command(fmt.Sprintf("echo %d >> runs", i), true)
			started <- struct{}{}
			if errs[i] = l.launcher.Start(cmd); errs[i] == nil {
				errs[i] = cmd.Wait()
			}
		})
	}
	<-started
	<-started
	if err := l.launcher.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if os.Geteuid() == 0 {
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	}
	for i, err := range errs {
		if err != nil {
			t.Errorf("command %d: %v", i, err)
		}
	}
	data, err := os.ReadFile(filepath.Join(l.workspace, "runs"))
	if err != nil {
		t.Fatal(err)
	}
	runs := strings.Fields(string(data))
	slices.Sort(runs)
	want := make([]string, n)
	for i := range n {
		want[i] = fmt.Sprint(i)
	}
	if !slices.Equal(runs, want) {
		t.Errorf("the commands ran %q, want each once: %q", runs, want)
	}
	if pid := sandbox.WarmPid(l.launcher); pid != 0 {
		t.Errorf("a launcher started ahead, %d, is there after Close", pid)
	}
	for _, pid := range children(t, os.Getpid()) {
		if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", pid)); strings.TrimSpace(string(comm)) == "agent-sandbox" || asusertest.Alive(pid) {
			t.Errorf("process %d (%s) is left after Close", pid, strings.TrimSpace(string(comm)))
		}
	}
}

// children returns the pids, zombies included, whose parent is pid.
func children(t *testing.T, pid int) []int {
	t.Helper()
	var out []int
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		var child, parent int
		var comm, state string
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if _, err := fmt.Sscanf(string(data), "%d %s %s %d", &child, &comm, &state, &parent); err == nil && parent == pid {
			out = append(out, child)
		}
	}
	return out
}

// TestWarmLauncherContext: a command with a context is not given to the
// launcher started ahead (cmd.Start watches the context), its
// cancellation ends it, and the launcher started ahead stays for the next
// command. A context already done stops the command from starting, as
// cmd.Start does, even with no Cancel.
func TestWarmLauncherContext(t *testing.T) {
	l := newWarmLayout(t, sandbox.Paths{})
	l.settle(t)
	ahead := sandbox.WarmPid(l.launcher)
	command := func(ctx context.Context, script string) *exec.Cmd {
		cmd := exec.CommandContext(ctx, "/bin/bash", "-c", script)
		cmd.Dir = l.workspace
		cmd.Env = []string{"PATH=" + testPATH}
		l.launcher.Wrap(cmd, sandbox.Paths{})
		procgroup.Set(cmd)
		if asusertest.Needed() {
			asusertest.Drop(cmd)
		}
		return cmd
	}
	ctx, cancel := context.WithCancel(context.Background())
	cmd := command(ctx, `exec sleep 1000`)
	if err := l.start(t, cmd); err != nil {
		t.Fatal(err)
	}
	if cmd.Process.Pid == ahead {
		t.Error("a command with a context went to the launcher started ahead")
	}
	cancel()
	if err := cmd.Wait(); err == nil {
		t.Error("the cancelled command ended with success")
	}
	done, stop := context.WithCancel(context.Background())
	stop()
	cmd = command(done, `echo ran >> ran`)
	cmd.Cancel = nil
	err := l.start(t, cmd)
	if err == nil {
		_ = cmd.Wait()
	}
	if !errors.Is(err, context.Canceled) {
		t.Errorf("start with a context already done: %v, want %v", err, context.Canceled)
	}
	if _, err := os.Stat(filepath.Join(l.workspace, "ran")); err == nil {
		t.Error("the command with a context already done ran")
	}
	if got := sandbox.WarmPid(l.launcher); got != ahead {
		t.Errorf("the launcher started ahead changed from %d to %d", ahead, got)
	}
	if out, err := l.run(t, `echo ok`, true); err != nil || out != "ok\n" {
		t.Errorf("the next command: %v, output %q", err, out)
	}
}

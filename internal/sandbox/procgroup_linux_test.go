package sandbox_test

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/volcanic/telegram-agent/internal/asusertest"
	"github.com/volcanic/telegram-agent/internal/procgroup"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// TestSandboxCooperatesWithProcgroup ends sandboxed commands the way the
// spawners do, through procgroup, and checks that the signal reaches the
// command through its group, that the launcher outlives a group SIGKILL to
// clean up what setsid took out of the group, and that the spawner sees the
// command's own ending.
func TestSandboxCooperatesWithProcgroup(t *testing.T) {
	forEachStart(t, testSandboxCooperatesWithProcgroup)
}

func testSandboxCooperatesWithProcgroup(t *testing.T, warm bool) {
	l := newLayoutWith(t, sandbox.Paths{}, warm)
	const escapee = `setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $!; `
	tests := []struct {
		name       string
		script     string
		end        func(cmd *exec.Cmd)
		wantSignal syscall.Signal
	}{
		{name: "Stop, the command ends on SIGTERM", script: escapee + `sleep 1000`,
			end: func(cmd *exec.Cmd) { procgroup.Stop(cmd, time.Second) }, wantSignal: unix.SIGTERM},
		{name: "Stop, the command ignores SIGTERM", script: `trap '' TERM; ` + escapee + `while :; do sleep 1; done`,
			end: func(cmd *exec.Cmd) { procgroup.Stop(cmd, 200*time.Millisecond) }, wantSignal: unix.SIGKILL},
		{name: "Kill", script: escapee + `sleep 1000`,
			end: procgroup.Kill, wantSignal: unix.SIGKILL},
		{name: "SIGTERM to the launcher alone, as the MCP SDK sends it", script: escapee + `sleep 1000`,
			end: func(cmd *exec.Cmd) { _ = cmd.Process.Signal(unix.SIGTERM) }, wantSignal: unix.SIGTERM},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := l.command(tt.script, true)
			// A pipe of its own rather than StdoutPipe: a warm launcher
			// takes only commands whose streams are files.
			out, w, err := os.Pipe()
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			cmd.Stdout = w
			err = l.start(t, cmd)
			w.Close()
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { procgroup.Kill(cmd) })
			line, err := bufio.NewReader(out).ReadString('\n')
			if err != nil {
				t.Fatalf("read the escapee's pid: %v", err)
			}
			pid, err := strconv.Atoi(strings.TrimSpace(line))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = unix.Kill(pid, unix.SIGKILL) })
			tt.end(cmd)
			err = cmd.Wait()
			var exitErr *exec.ExitError
			if !errors.As(err, &exitErr) {
				t.Fatalf("Wait: %v, want the command's signal", err)
			}
			if ws := exitErr.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != tt.wantSignal {
				t.Errorf("the launcher ended with %v, want the command's %v", exitErr, tt.wantSignal)
			}
			if asusertest.Alive(pid) {
				t.Errorf("the setsid escapee %d outlived the launcher", pid)
			}
			l.settle(t)
		})
	}
}

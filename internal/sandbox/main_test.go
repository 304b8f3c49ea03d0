package sandbox_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/procgroup"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// fakeBotArg starts the test binary as a stand-in for the bot (or an MCP
// server): a process of the agent's user, never hardened, that holds a
// secret in its environment. It prints its pid and lives until its stdin
// closes.
const fakeBotArg = "fake-bot"

// warmHolderArg starts the test binary as a bot that keeps a launcher
// started ahead (its view's directory is the next argument): it prints
// that launcher's pid once it is ready, and waits to be killed.
const warmHolderArg = "warm-holder"

// warmRunnerArg starts the test binary as a bot whose launcher started
// ahead runs a command (its view's directory is the next argument): it
// prints the launcher's, the command's and the command's setsid orphan's
// pids once they run, and waits to be killed.
const warmRunnerArg = "warm-runner"

// TestMain runs the launcher mode, the fake bot and the warm holder when
// the test binary is started as them, and the tests otherwise.
func TestMain(m *testing.M) {
	if sandbox.IsLaunch(os.Args) {
		os.Exit(sandbox.Launch(os.Args, os.Stderr))
	}
	if len(os.Args) == 3 && os.Args[1] == warmHolderArg {
		os.Exit(holdWarm(os.Args[2]))
	}
	if len(os.Args) == 3 && os.Args[1] == warmRunnerArg {
		os.Exit(runWarm(os.Args[2]))
	}
	if len(os.Args) == 2 && os.Args[1] == fakeBotArg {
		fmt.Println(os.Getpid())
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// holdWarm is the warm holder: a launcher of this binary confined to dir,
// kept started ahead; it prints the pid of the launcher waiting, then
// blocks until it is killed.
func holdWarm(dir string) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	l, err := sandbox.NewLauncher(exe, sandbox.View{Workspace: dir, Temp: dir}, sandbox.WithWarm())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := sandbox.WaitWarm(context.Background(), l); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println(sandbox.WarmPid(l))
	select {}
}

// runWarm is the warm runner: a launcher of this binary confined to dir,
// whose launcher started ahead takes a command that leaves a setsid
// orphan and sleeps; it prints the three pids, then blocks until it is
// killed.
func runWarm(dir string) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	view := sandbox.View{Workspace: dir, Temp: dir, System: sandbox.SystemDirs(nil)}
	l, err := sandbox.NewLauncher(exe, view, sandbox.WithWarm())
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if err := sandbox.WaitWarm(context.Background(), l); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	warm := sandbox.WarmPid(l)
	cmd := exec.Command("/bin/bash", "-c", `setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > orphan.tmp && mv orphan.tmp orphan; echo $$ > command.tmp && mv command.tmp command; exec sleep 1000`)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	l.Wrap(cmd, sandbox.Paths{})
	procgroup.Set(cmd)
	if err := l.Start(cmd); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if cmd.Process.Pid != warm {
		fmt.Fprintf(os.Stderr, "the command went to %d, not to the launcher started ahead, %d\n", cmd.Process.Pid, warm)
		return 1
	}
	var pids []string
	deadline := time.Now().Add(time.Minute)
	for _, name := range []string{"command", "orphan"} {
		for {
			data, err := os.ReadFile(filepath.Join(dir, name))
			if err == nil {
				pids = append(pids, strings.TrimSpace(string(data)))
				break
			}
			if time.Now().After(deadline) {
				fmt.Fprintf(os.Stderr, "the command wrote no %s\n", name)
				procgroup.Kill(cmd)
				return 1
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	fmt.Println(warm, pids[0], pids[1])
	select {}
}

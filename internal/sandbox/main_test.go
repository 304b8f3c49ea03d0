package sandbox_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
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

// reapRunnerArg starts the test binary as a bot that reaps the leftovers
// of its launchers (sandbox.ReapLeftovers) and runs a command as the warm
// runner does, through a launcher started ahead or not (the next
// arguments: the view's directory, then "warm" or "cold"): it prints the
// launcher's, the command's and the orphan's pids, and waits to be killed.
const reapRunnerArg = "reap-runner"

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
		os.Exit(runCommand(os.Args[2], true))
	}
	if len(os.Args) == 4 && os.Args[1] == reapRunnerArg {
		if err := sandbox.ReapLeftovers(context.Background()); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(runCommand(os.Args[2], os.Args[3] == "warm"))
	}
	if len(os.Args) == 4 && os.Args[1] == seccompProbeArg {
		other, err := strconv.Atoi(os.Args[3])
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		os.Exit(probeProcessCall(os.Args[2], other))
	}
	if len(os.Args) == 5 && os.Args[1] == egressProbeArg {
		os.Exit(probeEgress(os.Args[2], os.Args[3], os.Args[4]))
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

// runCommand is the warm runner: a launcher of this binary confined to
// dir, whose launcher (started ahead when warm) takes a command that
// leaves a setsid orphan and sleeps; it prints the three pids, then
// blocks until it is killed.
func runCommand(dir string, warm bool) int {
	exe, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	view := sandbox.View{Workspace: dir, Temp: dir, System: sandbox.SystemDirs(nil)}
	var opts []sandbox.Option
	if warm {
		opts = append(opts, sandbox.WithWarm())
	}
	l, err := sandbox.NewLauncher(exe, view, opts...)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	ahead := 0
	if warm {
		if err := sandbox.WaitWarm(context.Background(), l); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		ahead = sandbox.WarmPid(l)
	}
	cmd := exec.Command("/bin/bash", "-c", `setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > orphan.tmp && mv orphan.tmp orphan; echo $$ > command.tmp && mv command.tmp command; exec sleep 1000`)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	l.Wrap(cmd, sandbox.Paths{})
	procgroup.Set(cmd)
	if err := l.Start(cmd); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if warm && cmd.Process.Pid != ahead {
		fmt.Fprintf(os.Stderr, "the command went to %d, not to the launcher started ahead, %d\n", cmd.Process.Pid, ahead)
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
	fmt.Println(cmd.Process.Pid, pids[0], pids[1])
	select {}
}

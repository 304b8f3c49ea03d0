package sandbox_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"testing"

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

// TestMain runs the launcher mode, the fake bot and the warm holder when
// the test binary is started as them, and the tests otherwise.
func TestMain(m *testing.M) {
	if sandbox.IsLaunch(os.Args) {
		os.Exit(sandbox.Launch(os.Args, os.Stderr))
	}
	if len(os.Args) == 3 && os.Args[1] == warmHolderArg {
		os.Exit(holdWarm(os.Args[2]))
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

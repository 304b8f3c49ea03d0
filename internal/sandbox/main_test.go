package sandbox_test

import (
	"bufio"
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

// TestMain runs the launcher mode and the fake bot when the test binary is
// started as them, and the tests otherwise.
func TestMain(m *testing.M) {
	if sandbox.IsLaunch(os.Args) {
		os.Exit(sandbox.Launch(os.Args, os.Stderr))
	}
	if len(os.Args) == 2 && os.Args[1] == fakeBotArg {
		fmt.Println(os.Getpid())
		_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	os.Exit(m.Run())
}

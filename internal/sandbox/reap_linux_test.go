package sandbox_test

import (
	"testing"

	"golang.org/x/sys/unix"

	"github.com/volcanic/telegram-agent/internal/asusertest"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// TestReapLeftoversOfAKilledLauncher: a launcher killed from outside (as
// the MCP SDK kills a server that does not stop, or the OOM killer) while
// its command runs with a setsid child leaves both to the bot, which
// reaps its launchers' leftovers: both end, and the bot runs on.
func TestReapLeftoversOfAKilledLauncher(t *testing.T) {
	forEachStart(t, func(t *testing.T, warm bool) {
		if sandbox.ABI() == 0 {
			t.Skip("the kernel has no Landlock (landlock_create_ruleset fails)")
		}
		bot, pids := startRunner(t, reapRunnerArg, map[bool]string{false: "cold", true: "warm"}[warm])
		if err := unix.Kill(pids[0], unix.SIGKILL); err != nil {
			t.Fatal(err)
		}
		waitGone(t, pids, []string{"launcher", "command", "setsid orphan"}, "its launcher")
		if !asusertest.Alive(bot.Process.Pid) {
			t.Error("the bot ended with its launcher")
		}
	})
}

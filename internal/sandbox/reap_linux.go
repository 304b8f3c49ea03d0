//go:build linux

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"time"

	"golang.org/x/sys/unix"
)

// reapEvery is how often ReapLeftovers looks for leftovers without a
// SIGCHLD to prompt it.
const reapEvery = 10 * time.Second

// ReapLeftovers makes the calling process, the bot, a child subreaper and,
// until ctx is done, kills and reaps what a launcher killed from outside
// (the MCP SDK's SIGKILL after its timeout, the OOM killer) leaves behind.
// A launcher ends its command's tree itself, and the command has no
// parent-death signal (see startConfined), so without this the tree would
// run on, re-parented to pid 1. As a subreaper the bot adopts it instead,
// and tells it from its own children (the launchers, whose main thread
// never sets no_new_privs) by no_new_privs, which every sandboxed process
// has and cannot clear. It looks on each SIGCHLD (a launcher ending) and
// every reapEvery. It waits only for the processes it kills, never for a
// child os/exec waits for. It refuses when the bot has no_new_privs itself
// (systemd's NoNewPrivileges=, Docker's no-new-privileges): its launchers
// would then have it too.
func ReapLeftovers(ctx context.Context) error {
	if nnp, err := noNewPrivs(os.Getpid()); err != nil || nnp {
		if err == nil {
			err = errors.New("the bot runs with no_new_privs, so its launchers cannot be told from their leftovers")
		}
		return fmt.Errorf("reap the leftovers of launchers killed from outside: %w", err)
	}
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		return fmt.Errorf("prctl(PR_SET_CHILD_SUBREAPER): %w", err)
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, unix.SIGCHLD)
	go func() {
		defer signal.Stop(sigs)
		tick := time.NewTicker(reapEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-sigs:
			case <-tick.C:
			}
			reapLeftovers()
		}
	}()
	return nil
}

// reapLeftovers kills and reaps the calling process's children that have
// no_new_privs, round after round: a leftover killed may leave its own
// children to the bot.
func reapLeftovers() {
	for {
		var left []int
		for _, pid := range ownChildren() {
			// A child that ended (a zombie) still shows its flag, and its
			// pid cannot be reused before it is reaped, here.
			if nnp, err := noNewPrivs(pid); err == nil && nnp {
				left = append(left, pid)
			}
		}
		if len(left) == 0 {
			return
		}
		for _, pid := range left {
			_ = unix.Kill(pid, unix.SIGKILL)
		}
		for _, pid := range left {
			var status unix.WaitStatus
			for {
				if _, err := unix.Wait4(pid, &status, 0, nil); !errors.Is(err, unix.EINTR) {
					break
				}
			}
		}
	}
}

// noNewPrivs reports whether process pid has no_new_privs set, from its
// /proc status.
func noNewPrivs(pid int) (bool, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false, err
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if v, ok := bytes.CutPrefix(sc.Bytes(), []byte("NoNewPrivs:")); ok {
			return string(bytes.TrimSpace(v)) == "1", nil
		}
	}
	return false, fmt.Errorf("process %d: no NoNewPrivs in its status", pid)
}

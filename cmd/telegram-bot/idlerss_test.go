package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/openaitest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// idleBot names a prebuilt binary for TestBinaryIdleRSS, so the figure can
// be taken of the image's own build (-trimpath -ldflags='-s -w'); empty
// builds one as the other binary tests do.
var idleBot = flag.String("idle-bot", "", "the binary TestBinaryIdleRSS measures (default: built by the test)")

// memFigures are one process's resident memory in kB: the status lines
// split by kind, and smaps_rollup's pages only this process maps.
type memFigures struct {
	rss, anon, file, shmem int
	private, pss           int
	threads                int
}

// readMem reads pid's figures from /proc.
func readMem(pid int) (memFigures, error) {
	var m memFigures
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return m, err
	}
	rollup, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
	if err != nil {
		return m, err
	}
	fields := map[string]*int{
		"VmRSS:": &m.rss, "RssAnon:": &m.anon, "RssFile:": &m.file, "RssShmem:": &m.shmem,
		"Pss:": &m.pss, "Threads:": &m.threads,
	}
	var privClean, privDirty int
	fields["Private_Clean:"] = &privClean
	fields["Private_Dirty:"] = &privDirty
	for _, line := range strings.Split(string(status)+"\n"+string(rollup), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && fields[f[0]] != nil {
			*fields[f[0]], _ = strconv.Atoi(f[1])
		}
	}
	m.private = privClean + privDirty
	return m, nil
}

func (m memFigures) String() string {
	return fmt.Sprintf("VmRSS %d kB (RssAnon %d, RssFile %d, RssShmem %d); private %d kB, Pss %d kB; %d threads",
		m.rss, m.anon, m.file, m.shmem, m.private, m.pss, m.threads)
}

// descendants returns the pids of pid's children and theirs.
func descendants(pid int) []int {
	var out []int
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	for _, task := range tasks {
		data, _ := os.ReadFile(task)
		for _, f := range strings.Fields(string(data)) {
			if child, err := strconv.Atoi(f); err == nil {
				out = append(out, child)
				out = append(out, descendants(child)...)
			}
		}
	}
	return out
}

// TestBinaryIdleRSS records the bot's resident memory after start-up and
// one turn against the fakes, idle, and that of each process it keeps
// (the warm launcher): docs/performance.md keeps the figures. RssFile is
// the binary's pages shared with the page cache (and with the launcher, the
// same binary); private is what the process alone holds. The target is
// under 30 MB.
func TestBinaryIdleRSS(t *testing.T) {
	if _, err := os.Stat("/proc/self/smaps_rollup"); err != nil {
		t.Skip("no /proc/self/smaps_rollup")
	}
	tg := telegramtest.New(t)
	oa := openaitest.New(t, openaitest.WithScript(openaitest.Text("hello")))
	env := procEnv(tg, oa.URL(), t.TempDir(), t.TempDir())
	bin := *idleBot
	if bin == "" {
		bin = botBinary(t)
	}
	cmd := exec.Command(bin)
	cmd.Env = env
	p := startBotCmd(t, cmd)
	p.waitLog("polling Telegram")
	tg.SendText(procUser, procUser, "hi")
	waitMessage(t, tg, procUser, "hello")
	// Idle: the bot looks every idleTrimEvery whether it has gone quiet.
	time.Sleep(3 * idleTrimEvery)
	pid := p.cmd.Process.Pid
	bot, err := readMem(pid)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("idle bot after start-up and one turn: %v", bot)
	for _, child := range descendants(pid) {
		m, err := readMem(child)
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", child))
		t.Logf("  child %q: %v", strings.ReplaceAll(string(cmdline), "\x00", " "), m)
	}
	if bot.rss > 30*1024 {
		t.Errorf("idle VmRSS %d kB is above the 30 MB target", bot.rss)
	}
	p.terminate()
}

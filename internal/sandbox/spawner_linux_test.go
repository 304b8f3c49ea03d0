package sandbox_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/volcanic/telegram-agent/internal/asusertest"
	"github.com/volcanic/telegram-agent/internal/procgroup"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// spawnerPeerArg starts the test binary as a process that is not the bot
// but holds a copy of the bot's socket to the spawner (descriptor 3): it
// asks for a launcher as the agent's ids (the next two arguments) and
// prints the answer.
const spawnerPeerArg = "spawner-peer"

// testAgent are the agent's ids in these tests: no passwd entry needs them.
var testAgent = sandbox.IDs{UID: 64123, GID: 64123}

// botIDs are the ids the bot runs as once it gave up root: the
// unprivileged user.
var botIDs = sandbox.IDs{UID: asusertest.UID, GID: asusertest.GID}

// askAsPeer is the spawner peer.
func askAsPeer(uid, gid string) int {
	u, _ := strconv.Atoi(uid)
	g, _ := strconv.Atoi(gid)
	err := sandbox.AskSpawner(os.NewFile(3, "spawner"), sandbox.IDs{UID: u, GID: g})
	fmt.Println("answer:", err)
	return 0
}

// newSpawner starts a spawner of a public copy of the test binary, as
// botIDs for testAgent, ended with the test. It needs root.
func newSpawner(t testing.TB, bin string) *sandbox.Spawner {
	t.Helper()
	if !asusertest.Needed() {
		t.Skip("the spawner needs root (or CAP_SETUID and CAP_SETGID) to start, and the tests do not run as root")
	}
	s, err := sandbox.StartSpawner(bin, botIDs, testAgent)
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// newAgentLayout is newLayout whose launcher (warm or not) runs commands
// as testAgent through a spawner; the commands' first launcher runs as the
// unprivileged user, as the bot does.
func newAgentLayout(t *testing.T, warm bool) (*layout, *sandbox.Spawner) {
	t.Helper()
	l := newLayout(t, sandbox.Paths{})
	s := newSpawner(t, l.launcher.Executable())
	opts := []sandbox.Option{sandbox.WithSpawner(s)}
	if warm {
		opts = append(opts, sandbox.WithWarm(), sandbox.WithWarmStart(startAsUser))
	}
	var err error
	l.launcher, err = sandbox.NewLauncher(l.launcher.Executable(), l.launcher.View(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.launcher.Close() })
	if warm {
		l.settle(t)
	}
	return l, s
}

// statusField returns a field of /proc/<pid>/status.
func statusField(t *testing.T, pid int, name string) string {
	t.Helper()
	v, err := asusertest.StatusField(pid, name)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestSpawnerKeepsOnlySetuidSetgid checks the spawner's credentials: the
// bot's ids, CAP_SETUID and CAP_SETGID alone in its permitted, effective
// and bounding sets, nothing inheritable or ambient.
func TestSpawnerKeepsOnlySetuidSetgid(t *testing.T) {
	l := newLayout(t, sandbox.Paths{})
	s := newSpawner(t, l.launcher.Executable())
	keep := fmt.Sprintf("%016x", 1<<unix.CAP_SETUID|1<<unix.CAP_SETGID)
	want := map[string]string{
		"Uid": fourTimes(botIDs.UID), "Gid": fourTimes(botIDs.GID),
		"Groups": "", "CapPrm": keep, "CapEff": keep, "CapBnd": keep,
		"CapInh": strings.Repeat("0", 16), "CapAmb": strings.Repeat("0", 16),
	}
	got := map[string]string{}
	for k := range want {
		got[k] = statusField(t, s.Pid(), k)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the spawner's credentials (-want +got):\n%s", diff)
	}
}

// TestSpawnerRunsCommandsAsTheAgent runs commands through a launcher with
// a spawner, cold and started ahead: each runs as the agent's ids, with no
// capability and no_new_privs, and ends as it ended (an exit code, a
// signal).
func TestSpawnerRunsCommandsAsTheAgent(t *testing.T) {
	for _, warm := range []bool{false, true} {
		t.Run(map[bool]string{false: "cold", true: "warm"}[warm], func(t *testing.T) {
			l, _ := newAgentLayout(t, warm)
			out, err := l.run(t, `echo "$(id -u):$(id -g):$(id -G)"; grep -E '^(CapPrm|CapEff|CapAmb|NoNewPrivs):' /proc/self/status | tr -s '\t' ' '`, true)
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			id := fmt.Sprintf("%d:%d:%d", testAgent.UID, testAgent.GID, testAgent.GID)
			want := id + "\nCapPrm: 0000000000000000\nCapEff: 0000000000000000\nCapAmb: 0000000000000000\nNoNewPrivs: 1\n"
			if diff := cmp.Diff(want, out); diff != "" {
				t.Errorf("the command's ids and capabilities (-want +got):\n%s", diff)
			}
			_, err = l.run(t, "exit 7", true)
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 7 {
				t.Errorf("exit 7 ended as %v", err)
			}
			_, err = l.run(t, "kill -TERM $$", true)
			if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
				t.Errorf("a command killed by SIGTERM ended as %v", err)
			}
		})
	}
}

// TestSpawnerGroupKillEndsTheAgentsCommand kills the process group of a
// relayed command as every spawner does at a timeout (the bot cannot
// signal the agent's uid): the command, a process of the agent's, ends
// too, and so does what it left behind.
//
// Started with cmd.Start, as the MCP SDK starts a server, the bot keeps its
// copy of the socket to the agent-side launcher: that launcher learns of
// the relay's end from the relay's pidfd.
func TestSpawnerGroupKillEndsTheAgentsCommand(t *testing.T) {
	for _, direct := range []bool{false, true} {
		t.Run(map[bool]string{false: "Launcher.Start", true: "cmd.Start"}[direct], func(t *testing.T) {
			testGroupKill(t, direct)
		})
	}
}

func testGroupKill(t *testing.T, direct bool) {
	l, _ := newAgentLayout(t, false)
	cmd := l.command(`setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > orphan.tmp && mv orphan.tmp orphan; echo $$ > command.tmp && mv command.tmp command; exec sleep 1000`, true)
	start := l.start
	if direct {
		start = func(t *testing.T, cmd *exec.Cmd) error { return asusertest.Start(t, cmd) }
	}
	if err := start(t, cmd); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"command", "orphan"} {
		deadline := time.Now().Add(30 * time.Second)
		for {
			if _, err := os.Stat(filepath.Join(l.workspace, name)); err == nil || time.Now().After(deadline) {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	pids := l.readPids(t, "command", "orphan")
	for _, pid := range pids {
		if got := statusField(t, pid, "Uid"); !strings.HasPrefix(got, strconv.Itoa(testAgent.UID)+" ") {
			t.Errorf("process %d runs as %s", pid, got)
		}
	}
	procgroup.Kill(cmd)
	_ = cmd.Wait()
	deadline := time.Now().Add(30 * time.Second)
	for _, pid := range pids {
		for asusertest.Alive(pid) && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if asusertest.Alive(pid) {
			t.Errorf("process %d of the agent's still runs after its launcher's group was killed", pid)
			_ = unix.Kill(pid, unix.SIGKILL)
		}
	}
}

// TestSpawnerRefusesOtherIDs asks the spawner for launchers as ids other
// than the agent's: root's, the bot's own, another user's. Each is
// refused.
func TestSpawnerRefusesOtherIDs(t *testing.T) {
	l := newLayout(t, sandbox.Paths{})
	s := newSpawner(t, l.launcher.Executable())
	f, err := sandbox.SpawnerFile(s)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, ids := range []sandbox.IDs{{UID: 0, GID: 0}, botIDs, {UID: testAgent.UID, GID: 0}, {UID: 0, GID: testAgent.GID}, {UID: testAgent.UID + 1, GID: testAgent.GID + 1}} {
		if err := sandbox.AskSpawner(f, ids); err == nil || !strings.Contains(err.Error(), "refused") {
			t.Errorf("a launcher as %s: %v, want a refusal", ids, err)
		}
	}
	if err := sandbox.AskSpawner(f, testAgent); err != nil {
		t.Errorf("a launcher as the agent's ids: %v", err)
	}
}

// TestSpawnerRefusesOtherPeers hands a copy of the bot's socket to the
// spawner to another process, which asks for a launcher as the agent's
// ids: the spawner refuses it (the kernel vouches for the sender's pid).
func TestSpawnerRefusesOtherPeers(t *testing.T) {
	l := newLayout(t, sandbox.Paths{})
	s := newSpawner(t, l.launcher.Executable())
	f, err := sandbox.SpawnerFile(s)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(l.launcher.Executable(), spawnerPeerArg, strconv.Itoa(testAgent.UID), strconv.Itoa(testAgent.GID))
	cmd.ExtraFiles = []*os.File{f}
	asusertest.Drop(cmd)
	out, err := asusertest.CombinedOutput(t, cmd)
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if !strings.Contains(string(out), "refused") || !strings.Contains(string(out), "not the bot") {
		t.Errorf("another process's request was not refused: %s", out)
	}
	if err := sandbox.AskSpawner(f, testAgent); err != nil {
		t.Errorf("the bot's own request after the refusal: %v", err)
	}
}

// TestSpawnerEndsWithTheBot checks that the spawner exits once the bot's
// end of its socket is closed.
func TestSpawnerEndsWithTheBot(t *testing.T) {
	l := newLayout(t, sandbox.Paths{})
	s := newSpawner(t, l.launcher.Executable())
	pid := s.Pid()
	s.Close()
	if asusertest.Alive(pid) {
		t.Errorf("the spawner %d still runs", pid)
	}
}

// fourTimes is an id as /proc/<pid>/status shows it for a process whose
// real, effective, saved and file-system ids are all id.
func fourTimes(id int) string { return strings.TrimSpace(strings.Repeat(strconv.Itoa(id)+" ", 4)) }

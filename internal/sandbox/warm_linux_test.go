package sandbox_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/volcanic/telegram-agent/internal/asusertest"
	"github.com/volcanic/telegram-agent/internal/procgroup"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// TestWarmLauncherTakesTheCommand: the command goes to the launcher
// started ahead (its pid is the command's process), ends as the command
// did, and a new launcher is started ahead after it.
func TestWarmLauncherTakesTheCommand(t *testing.T) {
	l := newWarmLayout(t, sandbox.Paths{})
	l.settle(t)
	first := sandbox.WarmPid(l.launcher)
	f, err := os.CreateTemp(t.TempDir(), "output")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := l.command(`echo "hello from $$"; exit 4`, true)
	cmd.Stdout, cmd.Stderr = f, f
	if err := l.start(t, cmd); err != nil {
		t.Fatal(err)
	}
	if cmd.Process.Pid != first {
		t.Errorf("the command's process is %d, want the launcher started ahead, %d", cmd.Process.Pid, first)
	}
	if code := exitCode(cmd.Wait()); code != 4 {
		t.Errorf("exit code %d, want the command's 4", code)
	}
	if out, _ := os.ReadFile(f.Name()); !strings.HasPrefix(string(out), "hello from ") {
		t.Errorf("output %q, want the command's", out)
	}
	l.settle(t)
	if next := sandbox.WarmPid(l.launcher); next == 0 || next == first {
		t.Errorf("the launcher started ahead after the command is %d, want a new one (the first was %d)", next, first)
	}
}

// TestWarmLauncherOutOfReach: a sandboxed command cannot signal the
// launcher waiting for the next command (it is in no domain; ABI 6 scopes
// signals) nor read its /proc environ, while without the sandbox the same
// user can signal it (the control).
func TestWarmLauncherOutOfReach(t *testing.T) {
	if abi := sandbox.ABI(); abi < 6 {
		t.Skipf("needs Landlock ABI 6 (scoped signals), the kernel has %d", abi)
	}
	l := newWarmLayout(t, sandbox.Paths{})
	cold, err := newLauncher(t, l.launcher.Executable(), l.launcher.View(), false)
	if err != nil {
		t.Fatal(err)
	}
	l.settle(t)
	idle := sandbox.WarmPid(l.launcher)
	env := "W=" + strconv.Itoa(idle)
	attacker := &layout{root: l.root, agentDir: l.agentDir, workspace: l.workspace, temp: l.temp, launcher: cold}
	for _, script := range []string{`kill -0 $W`, `kill -STOP $W`, `tr '\0' '\n' < /proc/$W/environ`} {
		if out, err := attacker.run(t, script, true, env); err == nil {
			t.Errorf("sandboxed %q: succeeded (output %d bytes), want it refused", script, len(out))
		}
	}
	if out, err := attacker.run(t, `kill -0 $W`, false, env); err != nil {
		t.Errorf("control (sandbox off) kill -0: %v; output:\n%s", err, out)
	}
	if got := sandbox.WarmPid(l.launcher); got != idle {
		t.Errorf("the launcher started ahead changed from %d to %d", idle, got)
	}
	if out, err := l.run(t, `echo ok`, true); err != nil || out != "ok\n" {
		t.Errorf("the launcher started ahead, after the attacks: %v, output %q", err, out)
	}
}

// TestWarmLauncherDiesIdle: a launcher started ahead that is killed before
// its command comes is reaped and replaced; the command runs. (One killed
// at the moment of the hand-over ends the command as any launcher killed
// does: its leader is a zombie before its other threads have closed the
// socket, so the hand-over can still succeed.)
func TestWarmLauncherDiesIdle(t *testing.T) {
	l := newWarmLayout(t, sandbox.Paths{})
	l.settle(t)
	idle := sandbox.WarmPid(l.launcher)
	if err := unix.Kill(idle, unix.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitReaped(t, idle)
	if out, err := l.run(t, `echo ok`, true); err != nil || out != "ok\n" {
		t.Errorf("after the launcher started ahead was killed: %v, output %q", err, out)
	}
}

// TestWarmLauncherClose: Close ends the launcher started ahead (it is
// reaped, not left a zombie), and commands still start, cold.
func TestWarmLauncherClose(t *testing.T) {
	l := newWarmLayout(t, sandbox.Paths{})
	l.settle(t)
	idle := sandbox.WarmPid(l.launcher)
	if err := l.launcher.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(fmt.Sprintf("/proc/%d", idle)); !os.IsNotExist(err) {
		t.Errorf("the launcher started ahead, %d, is still there after Close (%v)", idle, err)
	}
	cmd := l.command(`exit 5`, true)
	if err := l.start(t, cmd); err != nil {
		t.Fatal(err)
	}
	if cmd.Process.Pid == idle {
		t.Error("after Close, the command went to the launcher Close ended")
	}
	if code := exitCode(cmd.Wait()); code != 5 {
		t.Errorf("after Close: exit code %d, want the command's 5", code)
	}
}

// TestWarmLauncherAtOnce: commands started at once (one finds the launcher
// started ahead, the others start their own, and one may come before the
// first launcher is ready) each run, with their own output.
func TestWarmLauncherAtOnce(t *testing.T) {
	l := newWarmLayout(t, sandbox.Paths{})
	const n = 4
	var wg sync.WaitGroup
	outs, errs := make([]string, n), make([]error, n)
	for i := range n {
		wg.Go(func() {
			f, err := os.CreateTemp(t.TempDir(), "output")
			if err != nil {
				errs[i] = err
				return
			}
			defer f.Close()
			cmd := l.command(fmt.Sprintf("echo %d", i), true)
			cmd.Stdout = f
			if errs[i] = l.launcher.Start(cmd); errs[i] == nil {
				errs[i] = cmd.Wait()
			}
			out, _ := os.ReadFile(f.Name())
			outs[i] = string(out)
		})
	}
	wg.Wait()
	// The starts as the unprivileged user made the test process
	// non-dumpable (see startAsUser).
	if os.Geteuid() == 0 {
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	}
	for i := range n {
		if errs[i] != nil || outs[i] != fmt.Sprintf("%d\n", i) {
			t.Errorf("command %d: %v, output %q", i, errs[i], outs[i])
		}
	}
	l.settle(t)
}

// TestWarmLauncherEndsWithTheBot: when the bot dies (SIGKILL, no Close),
// the launcher it kept waiting ends too (the parent-death signal, and the
// end of its socket), and is not left behind for an agent to find.
func TestWarmLauncherEndsWithTheBot(t *testing.T) {
	if sandbox.ABI() == 0 {
		t.Skip("the kernel has no Landlock (landlock_create_ruleset fails)")
	}
	holder := exec.Command(mustExecutable(t), warmHolderArg, t.TempDir())
	holder.Stderr = os.Stderr
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := holder.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("read the waiting launcher's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil || !asusertest.Alive(pid) {
		t.Fatalf("the waiting launcher %q: %v, alive %v", line, err, err == nil && asusertest.Alive(pid))
	}
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	deadline := time.Now().Add(time.Minute)
	for asusertest.Alive(pid) {
		if time.Now().After(deadline) {
			_ = unix.Kill(pid, unix.SIGKILL)
			t.Fatalf("the launcher %d the bot kept waiting outlived it", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// waitReaped waits until pid is no process at all (reaped, not a
// zombie), for up to a minute.
func waitReaped(t *testing.T, pid int) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(fmt.Sprintf("/proc/%d", pid)); os.IsNotExist(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("process %d not reaped", pid)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestWarmLauncherEndsWithTheBotWhileRunning: when the bot dies (SIGKILL,
// no Close) while the launcher it kept started ahead runs a command, the
// launcher, the command and the orphan the command left (setsid, out of
// its process group) all end. The bot runs as the unprivileged user.
func TestWarmLauncherEndsWithTheBotWhileRunning(t *testing.T) {
	if sandbox.ABI() == 0 {
		t.Skip("the kernel has no Landlock (landlock_create_ruleset fails)")
	}
	holder, pids := startRunner(t, warmRunnerArg)
	if err := holder.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = holder.Wait()
	waitGone(t, pids, []string{"launcher", "command", "setsid orphan"}, "the bot")
}

// TestWarmLaunchersSeparateDomains: two commands that run at once, each
// through a launcher started ahead, are in domains of their own: the
// second cannot read the first's /proc environ, which the same user reads
// without the sandbox (the control).
func TestWarmLaunchersSeparateDomains(t *testing.T) {
	l := newWarmLayout(t, sandbox.Paths{})
	secret := fakeSecret(t)
	l.settle(t)
	first := sandbox.WarmPid(l.launcher)
	stdin, hold, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	a := l.command(`echo $$ > a.pid.tmp && mv a.pid.tmp a.pid; read x`, true, "A_SECRET="+secret)
	a.Stdin = stdin
	err = l.start(t, a)
	stdin.Close()
	if err != nil {
		hold.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { hold.Close(); procgroup.Kill(a); _ = a.Wait() })
	if a.Process.Pid != first {
		t.Fatalf("the first command went to %d, not to the launcher started ahead, %d", a.Process.Pid, first)
	}
	deadline := time.Now().Add(time.Minute)
	for {
		if _, err := os.Stat(filepath.Join(l.workspace, "a.pid")); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the first command wrote no a.pid")
		}
		time.Sleep(5 * time.Millisecond)
	}
	env := "A=" + strconv.Itoa(l.readPids(t, "a.pid")[0])
	// The first launcher is taken; a command that finds none has the
	// replacement started.
	if out, err := l.run(t, `true`, true); err != nil {
		t.Fatalf("a command while the first runs: %v, output %q", err, out)
	}
	second := sandbox.WarmPid(l.launcher)
	f, err := os.CreateTemp(t.TempDir(), "output")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := l.command(`tr '\0' '\n' < /proc/$A/environ`, true, env)
	b.Stdout, b.Stderr = f, f
	if err := l.start(t, b); err != nil {
		t.Fatal(err)
	}
	if b.Process.Pid != second || second == 0 {
		t.Errorf("the second command went to %d, not to the launcher started ahead, %d", b.Process.Pid, second)
	}
	err = b.Wait()
	out, _ := os.ReadFile(f.Name())
	if err == nil {
		t.Errorf("the second command read the first's environ (%d bytes of output), want it refused", len(out))
	}
	if strings.Contains(string(out), secret) {
		t.Error("the first command's secret reached the second")
	}
	l.settle(t)
	if out, err := l.run(t, `tr '\0' '\n' < /proc/$A/environ`, false, env); err != nil || !strings.Contains(out, secret) {
		t.Errorf("control (sandbox off): %v, the environ read did not show the secret (%d bytes of output)", err, len(out))
	}
}

// startRunner starts the test binary as the unprivileged user in the mode
// arg (a runner: warmRunnerArg, reapRunnerArg) with a view directory of
// its own and the further args, and returns it and the pids it prints:
// the launcher's, the command's and the command's setsid orphan's, all
// running. Everything ends with the test.
func startRunner(t *testing.T, arg string, args ...string) (*exec.Cmd, []int) {
	t.Helper()
	bin := asusertest.PublicCopy(t, mustExecutable(t), 0o755)
	dir := filepath.Join(asusertest.PublicDir(t), "view")
	mkdirPublic(t, dir)
	holder := exec.Command(bin, append([]string{arg, dir}, args...)...)
	holder.Stderr = os.Stderr
	if asusertest.Needed() {
		asusertest.Drop(holder)
	}
	out, err := holder.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := asusertest.Start(t, holder); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = holder.Process.Kill(); _ = holder.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("read the pids: %v", err)
	}
	var pids []int
	for _, f := range strings.Fields(line) {
		pid, err := strconv.Atoi(f)
		if err != nil {
			t.Fatalf("the pids %q: %v", line, err)
		}
		t.Cleanup(func() { _ = unix.Kill(pid, unix.SIGKILL) })
		pids = append(pids, pid)
	}
	if len(pids) != 3 {
		t.Fatalf("the pids %q: want the launcher's, the command's and the orphan's", line)
	}
	for _, pid := range pids {
		if !asusertest.Alive(pid) {
			t.Fatalf("process %d is not running yet", pid)
		}
	}
	return holder, pids
}

// waitGone waits for each of pids, named by names, to end, and fails the
// test naming the first still running after a minute, with what it
// should have ended with.
func waitGone(t *testing.T, pids []int, names []string, with string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for i, name := range names {
		for asusertest.Alive(pids[i]) {
			if time.Now().After(deadline) {
				t.Fatalf("the %s (%d) outlived %s", name, pids[i], with)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
}

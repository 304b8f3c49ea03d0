package sandbox_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/volcanic/telegram-agent/internal/asusertest"
	"github.com/volcanic/telegram-agent/internal/procgroup"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// testPATH is the PATH the commands get: the system's directories only, so
// that the unprivileged user finds the same tools the bot's user would.
const testPATH = "/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// layout is a bot's directories, reachable by the unprivileged user without
// the sandbox: the agent dir with a session and jobs.json, the workspace
// and the temporary directory.
type layout struct {
	root, agentDir, workspace, temp string
	launcher                        *sandbox.Launcher
}

// newLayout makes the directories and a launcher that re-executes a public
// copy of the test binary.
func newLayout(t *testing.T, extra sandbox.Paths) *layout { return newLayoutWith(t, extra, false) }

// newWarmLayout is newLayout with a launcher that keeps one started ahead
// (as the unprivileged user), ended with the test.
func newWarmLayout(t *testing.T, extra sandbox.Paths) *layout { return newLayoutWith(t, extra, true) }

// newLayoutWith is newLayout, the launcher warm or not.
func newLayoutWith(t *testing.T, extra sandbox.Paths, warm bool) *layout {
	t.Helper()
	if sandbox.ABI() == 0 {
		t.Skip("the kernel has no Landlock (landlock_create_ruleset fails)")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := asusertest.PublicCopy(t, exe, 0o755)
	root := asusertest.PublicDir(t)
	l := &layout{
		root:      root,
		agentDir:  filepath.Join(root, "data"),
		workspace: filepath.Join(root, "workspace"),
		temp:      filepath.Join(root, "tmp"),
	}
	for _, d := range []string{l.agentDir, filepath.Join(l.agentDir, "sessions"), l.workspace, l.temp} {
		mkdirPublic(t, d)
	}
	writePublic(t, filepath.Join(l.agentDir, "sessions", "chat.jsonl"), `{"role":"user"}`+"\n")
	writePublic(t, filepath.Join(l.agentDir, "jobs.json"), "[]\n")
	view := sandbox.View{
		Workspace: l.workspace,
		Temp:      l.temp,
		System:    sandbox.SystemDirs(nil),
		Extra:     extra,
	}
	if view, err = view.Hide(map[string]string{"AGENT_DIR": l.agentDir}); err != nil {
		t.Fatal(err)
	}
	l.launcher, err = newLauncher(t, bin, view, warm)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// newLauncher returns a launcher of bin confined to view; a warm one
// starts its launchers ahead as the unprivileged user, and is closed with
// the test.
func newLauncher(t *testing.T, bin string, view sandbox.View, warm bool) (*sandbox.Launcher, error) {
	t.Helper()
	if !warm {
		return sandbox.NewLauncher(bin, view)
	}
	l, err := sandbox.NewLauncher(bin, view, sandbox.WithWarm(), sandbox.WithWarmStart(startAsUser))
	if err == nil {
		t.Cleanup(func() { l.Close() })
	}
	return l, err
}

// startAsUser starts cmd as the unprivileged user when the tests run as
// root, as asusertest.Start does: the child's change of user makes the
// test process non-dumpable (the child shares its memory until it
// executes), which is undone.
func startAsUser(cmd *exec.Cmd) error {
	if !asusertest.Needed() {
		return cmd.Start()
	}
	asusertest.Drop(cmd)
	err := cmd.Start()
	_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	return err
}

// mkdirPublic makes dir with mode 0777, whatever the umask.
func mkdirPublic(t *testing.T, dir string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
}

// writePublic writes a file everybody may read and write.
func writePublic(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o666); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o666); err != nil {
		t.Fatal(err)
	}
}

// command returns bash running script in the workspace, as the
// unprivileged user, with env (and PATH, HOME), through the launcher when
// sandboxed, in its own process group as every spawner makes it.
func (l *layout) command(script string, sandboxed bool, env ...string) *exec.Cmd {
	cmd := exec.Command("/bin/bash", "-c", script)
	cmd.Dir = l.workspace
	cmd.Env = append([]string{"PATH=" + testPATH, "HOME=" + l.workspace, "LANG=C"}, env...)
	cmd.WaitDelay = time.Minute
	if sandboxed {
		l.launcher.Wrap(cmd, sandbox.Paths{})
	}
	procgroup.Set(cmd)
	if asusertest.Needed() {
		asusertest.Drop(cmd)
	}
	return cmd
}

// run runs script and returns its combined output and error. A sandboxed
// command is started with Launcher.Start, its output in a file, as the
// bash tool starts it: a warm launcher takes it. The replacement of a
// warm launcher is ready when run returns, so no start is under way when
// a test ends.
func (l *layout) run(t *testing.T, script string, sandboxed bool, env ...string) (string, error) {
	t.Helper()
	cmd := l.command(script, sandboxed, env...)
	if !sandboxed {
		out, err := asusertest.CombinedOutput(t, cmd)
		return string(out), err
	}
	f, err := os.CreateTemp(t.TempDir(), "output")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd.Stdout, cmd.Stderr = f, f
	err = l.start(t, cmd)
	if err == nil {
		err = cmd.Wait()
	}
	out, rerr := os.ReadFile(f.Name())
	if rerr != nil {
		t.Fatal(rerr)
	}
	l.settle(t)
	return string(out), err
}

// start starts cmd with Launcher.Start, and restores the test process's
// dumpable flag as asusertest.Start does.
func (l *layout) start(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	err := l.launcher.Start(cmd)
	if asusertest.Needed() {
		_ = unix.Prctl(unix.PR_SET_DUMPABLE, 1, 0, 0, 0)
	}
	return err
}

// settle waits until a warm launcher's replacement is ready.
func (l *layout) settle(t *testing.T) {
	t.Helper()
	if !l.warm() {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := sandbox.WaitWarm(ctx, l.launcher); err != nil {
		t.Fatalf("the warm launcher's replacement: %v", err)
	}
}

// warm reports whether the layout's launcher keeps one started ahead.
func (l *layout) warm() bool { return l.launcher.Warm() }

// fakeSecret returns a fresh random value standing in for a secret.
func fakeSecret(t *testing.T) string {
	t.Helper()
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "fake-secret-" + hex.EncodeToString(b)
}

// startFakeBot starts the fake bot as the unprivileged user with secret in
// its environment (through the launcher when sandboxed, as an MCP server
// is) and returns its pid; it ends with the test.
func (l *layout) startFakeBot(t *testing.T, secret string, sandboxed bool) int {
	t.Helper()
	cmd := exec.Command(l.launcher.Executable(), fakeBotArg)
	cmd.Dir = l.workspace
	cmd.Env = []string{"PATH=" + testPATH, "FAKE_BOT_SECRET=" + secret}
	if sandboxed {
		// The binary lies outside the view: its directory is this spawn's
		// own addition, as an MCP server's config entry may add paths.
		l.launcher.Wrap(cmd, sandbox.Paths{Read: []string{filepath.Dir(l.launcher.Executable())}})
	}
	procgroup.Set(cmd)
	if asusertest.Needed() {
		asusertest.Drop(cmd)
	}
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := asusertest.Start(t, cmd); err != nil {
		t.Fatalf("start the fake bot: %v", err)
	}
	t.Cleanup(func() {
		stdin.Close()
		procgroup.Kill(cmd)
		_ = cmd.Wait()
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("read the fake bot's pid: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		t.Fatalf("the fake bot's pid %q: %v", line, err)
	}
	return pid
}

// readPids reads the pids, one a file, the script left in the workspace.
func (l *layout) readPids(t *testing.T, names ...string) []int {
	t.Helper()
	var pids []int
	for _, name := range names {
		data, err := os.ReadFile(filepath.Join(l.workspace, name))
		if err != nil {
			t.Fatalf("the script left no %s: %v", name, err)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatalf("%s holds %q: %v", name, data, err)
		}
		pids = append(pids, pid)
	}
	return pids
}

// mustExecutable returns the test binary's path.
func mustExecutable(tb testing.TB) string {
	tb.Helper()
	exe, err := os.Executable()
	if err != nil {
		tb.Fatal(err)
	}
	return exe
}

package scheduler

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/volcanic/telegram-agent/internal/asusertest"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// testLauncher returns a sandbox launcher that re-executes this test
// binary, with workspace as its view's.
func testLauncher(t *testing.T, workspace string) *sandbox.Launcher {
	t.Helper()
	if sandbox.ABI() == 0 {
		t.Skip("the kernel has no Landlock")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	l, err := sandbox.NewLauncher(exe, sandbox.View{Workspace: workspace, Temp: t.TempDir(), System: sandbox.SystemDirs(nil)})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestWatcherLeavesNothingBehind runs a watcher script that leaves a setsid
// orphan and a double-forked child behind: through the sandbox both are gone
// when the run ends (the launcher reaps them before it exits); without it
// (the control) the setsid orphan, outside the script's process group,
// outlives the run. The control's double-forked child is killed with the
// group, but asynchronously, so only the orphan is compared there.
func TestWatcherLeavesNothingBehind(t *testing.T) {
	// The orphan writes its pid itself, once setsid has made it a session
	// of its own, and the script waits for that: ended before, the run's
	// group kill could still reach it (the control would then see it dead).
	const script = `setsid sh -c 'echo $$ > setsid.pid; exec sleep 1000' </dev/null >/dev/null 2>&1 &
( sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > double.pid )
while [ ! -s setsid.pid ]; do sleep 0.01; done
echo fired`
	for _, sandboxed := range []bool{true, false} {
		name := map[bool]string{true: "sandboxed", false: "control (sandbox off)"}[sandboxed]
		t.Run(name, func(t *testing.T) {
			e := newEnv(t, setup{sandboxed: sandboxed})
			res := e.s.runScript(t.Context(), Job{ID: "job-1", Target: "chat-a", Script: script}, "")
			if res.failure != "" || strings.TrimSpace(res.stdout) != "fired" {
				t.Fatalf("the watcher's run: failure %q, stdout %q", res.failure, res.stdout)
			}
			var got []bool
			for _, name := range []string{"setsid.pid", "double.pid"} {
				data, err := os.ReadFile(filepath.Join(e.workspace, name))
				if err != nil {
					t.Fatal(err)
				}
				pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { _ = unix.Kill(pid, unix.SIGKILL) })
				got = append(got, asusertest.Alive(pid))
			}
			want := []bool{false, false}
			if !sandboxed {
				want, got = []bool{true}, got[:1]
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("setsid orphan, double-forked child alive after the run (-want +got):\n%s", diff)
			}
		})
	}
}

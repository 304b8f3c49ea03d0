package sandbox_test

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/volcanic/telegram-agent/internal/asusertest"
	"github.com/volcanic/telegram-agent/internal/procgroup"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// TestSandboxDescriptors: the command has its standard streams and its
// extra files, and no other descriptor: not the spec, not a warm
// launcher's socket to the bot, not the descriptors the launcher received,
// and not one the bot itself inherited without close-on-exec (here a
// memory file the test process holds so, as a bot started by a careless
// supervisor would).
func TestSandboxDescriptors(t *testing.T) {
	forEachStart(t, testSandboxDescriptors)
}

// lsEntry is a line of `ls -l /proc/self/fd`: the descriptor and what it
// points at.
var lsEntry = regexp.MustCompile(`(?m) (\d+) -> (.*)$`)

func testSandboxDescriptors(t *testing.T, warm bool) {
	stray, err := unix.MemfdCreate("agent-sandbox-test-stray", 0)
	if err != nil {
		t.Fatalf("memfd_create: %v", err)
	}
	t.Cleanup(func() { unix.Close(stray) })
	l := newLayoutWith(t, sandbox.Paths{}, warm)
	l.settle(t)
	for _, extra := range []int{0, 2} {
		t.Run(fmt.Sprintf("%d extra files", extra), func(t *testing.T) {
			out, err := os.CreateTemp(t.TempDir(), "output")
			if err != nil {
				t.Fatal(err)
			}
			defer out.Close()
			cmd := exec.Command("/bin/ls", "-l", "/proc/self/fd")
			cmd.Dir = l.workspace
			cmd.Env = []string{"PATH=" + testPATH, "LANG=C"}
			cmd.Stdout, cmd.Stderr = out, out
			want := map[int]string{0: os.DevNull, 1: out.Name(), 2: out.Name()}
			for i := range extra {
				f, err := os.CreateTemp(t.TempDir(), "extra")
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				cmd.ExtraFiles = append(cmd.ExtraFiles, f)
				want[3+i] = f.Name()
			}
			l.launcher.Wrap(cmd, sandbox.Paths{})
			procgroup.Set(cmd)
			if asusertest.Needed() {
				asusertest.Drop(cmd)
			}
			if err := l.start(t, cmd); err != nil {
				t.Fatal(err)
			}
			if err := cmd.Wait(); err != nil {
				t.Fatalf("ls: %v", err)
			}
			l.settle(t)
			data, err := os.ReadFile(out.Name())
			if err != nil {
				t.Fatal(err)
			}
			got := map[int]string{}
			for _, m := range lsEntry.FindAllStringSubmatch(string(data), -1) {
				fd, _ := strconv.Atoi(m[1])
				got[fd] = m[2]
			}
			for fd, target := range got {
				switch {
				case want[fd] != "":
					if target != want[fd] {
						t.Errorf("descriptor %d points at %q, want %q", fd, target, want[fd])
					}
				case strings.HasPrefix(target, "/proc/") && strings.HasSuffix(target, "/fd"):
					// ls's own listing of the directory.
				default:
					t.Errorf("the command inherited descriptor %d (%q)", fd, target)
				}
			}
			for fd := range want {
				if _, ok := got[fd]; !ok {
					t.Errorf("the command lacks descriptor %d; ls says:\n%s", fd, data)
				}
			}
		})
	}
}

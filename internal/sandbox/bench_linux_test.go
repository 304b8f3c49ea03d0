package sandbox_test

import (
	"flag"
	"os/exec"
	"testing"

	"github.com/volcanic/telegram-agent/internal/procgroup"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// launcherFlag names another launcher for BenchmarkBashTrue: the built bot
// binary, whose start-up is what production pays.
var launcherFlag = flag.String("launcher", "", "a telegram-bot binary to use as the launcher in BenchmarkBashTrue (default: this test binary)")

// BenchmarkBashTrue measures `bash -c true` started through the launcher
// (a re-executed binary, no_new_privs, a Landlock domain, the subreaper and
// its clean-up) against the bare exec of the same command, in the same run.
// The launcher is this test binary, or the binary -launcher names
// (docs/performance.md has both).
func BenchmarkBashTrue(b *testing.B) {
	if sandbox.ABI() == 0 {
		b.Skip("the kernel has no Landlock")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("bash is not installed")
	}
	dir := b.TempDir()
	exe := mustExecutable(b)
	if *launcherFlag != "" {
		exe = *launcherFlag
	}
	launcher, err := sandbox.NewLauncher(exe, sandbox.View{Workspace: dir, Temp: dir, System: sandbox.SystemDirs(nil)})
	if err != nil {
		b.Fatal(err)
	}
	for _, sandboxed := range []bool{false, true} {
		name := map[bool]string{false: "bare", true: "sandboxed"}[sandboxed]
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				cmd := exec.Command(bash, "-c", "true")
				cmd.Dir = dir
				cmd.Env = []string{"PATH=/usr/bin:/bin"}
				if sandboxed {
					launcher.Wrap(cmd, sandbox.Paths{})
				}
				procgroup.Set(cmd)
				if err := cmd.Run(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

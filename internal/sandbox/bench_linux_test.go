package sandbox_test

import (
	"os/exec"
	"testing"

	"github.com/volcanic/telegram-agent/internal/procgroup"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// BenchmarkBashTrue measures `bash -c true` started through the launcher
// (a re-executed binary, no_new_privs, a Landlock domain, the subreaper and
// its clean-up) against the bare exec of the same command, in the same run.
// The launcher is this test binary; the bot's binary is larger and starts a
// little slower (docs/performance.md has both).
func BenchmarkBashTrue(b *testing.B) {
	if sandbox.ABI() == 0 {
		b.Skip("the kernel has no Landlock")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("bash is not installed")
	}
	dir := b.TempDir()
	launcher, err := sandbox.NewLauncher(mustExecutable(b), sandbox.View{Workspace: dir, Temp: dir, System: sandbox.SystemDirs(nil)})
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

package sandbox_test

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/asusertest"
	"github.com/volcanic/telegram-agent/internal/procgroup"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// launcherFlag names another launcher for BenchmarkBashTrue: the built bot
// binary, whose start-up is what production pays.
var launcherFlag = flag.String("launcher", "", "a telegram-bot binary to use as the launcher in BenchmarkBashTrue (default: this test binary)")

// gap is the interleaved benchmark's pause before each pair of commands:
// far less than a model's answer takes, more than the replacement launcher
// needs to be ready and quiet.
const gap = 50 * time.Millisecond

// BenchmarkBashTrue measures `bash -c true` started through the launcher
// (no_new_privs, a Landlock domain, the subreaper and its clean-up)
// against the bare exec of the same command, in the same run:
//   - cold: a launcher process started for the command (the Go runtime's
//     start is in the time), what a command finds when none is started
//     ahead (WithWarm off, or several commands at once);
//   - warm: the launcher started ahead takes the command, and its
//     replacement is ready before the next one (outside the timer), as it
//     is after the model's answer a bash call waits for;
//   - warm, back to back: the next command comes at once, and finds the
//     replacement still starting;
//   - interleaved: bare and warm by turns after the same pause (gap), each
//     timed alone, reported as bare-ns/op, warm-ns/op and their ratio. The
//     pause stands for the model's answer between two bash calls: the
//     replacement is ready and quiet by then, as in the bot, and both
//     commands start from the same idle state. On a shared machine whose
//     load changes from one sub-benchmark to the next, taking both in the
//     same iteration is the fairest same-run ratio;
//   - filter: the same, with a third command through a warm launcher
//     that sets no seccomp filter (after another pause), reported as
//     filtered/bare and filtered/unfiltered: the filter's own cost, and
//     that of confining a thread of its own for the command (the
//     unfiltered spec does not fit the thread confined ahead);
//   - egress/<tier>: interleaved as above, through a warm launcher that
//     confines the network at that tier (netns adds the namespace stage,
//     a second start of the Go runtime).
//
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
	view := sandbox.View{Workspace: dir, Temp: dir, System: sandbox.SystemDirs(nil)}
	cold, err := sandbox.NewLauncher(exe, view)
	if err != nil {
		b.Fatal(err)
	}
	warm, err := sandbox.NewLauncher(exe, view, sandbox.WithWarm())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { warm.Close() })
	unfiltered, err := sandbox.NewLauncher(exe, view, sandbox.WithWarm(), sandbox.WithoutProcessFilter())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { unfiltered.Close() })
	run := func(b *testing.B, l *sandbox.Launcher) { bashTrue(b, bash, dir, l) }
	b.Run("bare", func(b *testing.B) {
		for b.Loop() {
			run(b, nil)
		}
	})
	b.Run("cold", func(b *testing.B) {
		for b.Loop() {
			run(b, cold)
		}
	})
	b.Run("warm", func(b *testing.B) {
		for b.Loop() {
			b.StopTimer()
			if err := sandbox.WaitWarm(context.Background(), warm); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			run(b, warm)
		}
	})
	b.Run("warm-back-to-back", func(b *testing.B) {
		for b.Loop() {
			run(b, warm)
		}
	})
	// interleave times bare and l by turns, after the same pause each
	// iteration, and reports both and their ratio (name/bare).
	interleave := func(b *testing.B, l *sandbox.Launcher, name string) {
		var bare, sandboxed time.Duration
		n := 0
		for b.Loop() {
			if err := sandbox.WaitWarm(context.Background(), l); err != nil {
				b.Fatal(err)
			}
			time.Sleep(gap)
			start := time.Now()
			run(b, nil)
			mid := time.Now()
			run(b, l)
			bare, sandboxed = bare+mid.Sub(start), sandboxed+time.Since(mid)
			n++
		}
		b.ReportMetric(float64(bare.Nanoseconds())/float64(n), "bare-ns/op")
		b.ReportMetric(float64(sandboxed.Nanoseconds())/float64(n), name+"-ns/op")
		b.ReportMetric(float64(sandboxed)/float64(bare), name+"/bare")
	}
	b.Run("interleaved", func(b *testing.B) { interleave(b, warm, "warm") })
	b.Run("egress", func(b *testing.B) {
		// bash -c true connects nowhere: the port is only the rule's.
		for _, tier := range []sandbox.EgressTier{sandbox.EgressLandlock, sandbox.EgressNamespace} {
			b.Run(tier.String(), func(b *testing.B) {
				if got, err := sandbox.DetectEgress(exe); got < tier {
					b.Skipf("the kernel offers %v: %v", got, err)
				}
				l, err := sandbox.NewLauncher(exe, view, sandbox.WithWarm(), sandbox.WithEgress(sandbox.Egress{ProxyPort: 9}), sandbox.WithEgressAtMost(tier))
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { l.Close() })
				interleave(b, l, "confined")
			})
		}
	})
	b.Run("filter", func(b *testing.B) {
		var bare, filtered, unfilt time.Duration
		n := 0
		for b.Loop() {
			for _, l := range []*sandbox.Launcher{warm, unfiltered} {
				if err := sandbox.WaitWarm(context.Background(), l); err != nil {
					b.Fatal(err)
				}
			}
			time.Sleep(gap)
			t0 := time.Now()
			run(b, nil)
			t1 := time.Now()
			// Which launcher goes first alternates: the second
			// finds the machine as the first left it.
			first, second := warm, unfiltered
			if n%2 == 1 {
				first, second = unfiltered, warm
			}
			run(b, first)
			t2 := time.Now()
			time.Sleep(gap)
			t3 := time.Now()
			run(b, second)
			d1, d2 := t2.Sub(t1), time.Since(t3)
			if first != warm {
				d1, d2 = d2, d1
			}
			bare, filtered, unfilt = bare+t1.Sub(t0), filtered+d1, unfilt+d2
			n++
		}
		b.ReportMetric(float64(bare.Nanoseconds())/float64(n), "bare-ns/op")
		b.ReportMetric(float64(filtered.Nanoseconds())/float64(n), "filtered-ns/op")
		b.ReportMetric(float64(unfilt.Nanoseconds())/float64(n), "unfiltered-ns/op")
		b.ReportMetric(float64(filtered)/float64(bare), "filtered/bare")
		b.ReportMetric(float64(filtered)/float64(unfilt), "filtered/unfiltered")
	})
}

// BenchmarkBashTrueAgentUID measures `bash -c true` through a warm
// launcher whose command runs as the agent's ids (a spawner, and the
// relay to the agent-side launcher, both started ahead) against the bare
// exec and the warm launcher of one uid, interleaved as in
// BenchmarkBashTrue (the same pause before each triple), reported as
// bare-ns/op, warm-ns/op, agent-ns/op and the ratios. It needs root.
func BenchmarkBashTrueAgentUID(b *testing.B) {
	if sandbox.ABI() == 0 {
		b.Skip("the kernel has no Landlock")
	}
	bash, err := exec.LookPath("bash")
	if err != nil {
		b.Skip("bash is not installed")
	}
	bin := asusertest.PublicCopy(b, mustExecutable(b), 0o755)
	dir := asusertest.PublicDir(b)
	if err := os.Chmod(dir, 0o777); err != nil {
		b.Fatal(err)
	}
	s := newSpawner(b, bin)
	view := sandbox.View{Workspace: dir, Temp: dir, System: sandbox.SystemDirs(nil)}
	warm, err := sandbox.NewLauncher(bin, view, sandbox.WithWarm())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { warm.Close() })
	agent, err := sandbox.NewLauncher(bin, view, sandbox.WithWarm(), sandbox.WithSpawner(s))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { agent.Close() })
	run := func(b *testing.B, l *sandbox.Launcher) { bashTrue(b, bash, dir, l) }
	var bare, one, two time.Duration
	n := 0
	for b.Loop() {
		for _, l := range []*sandbox.Launcher{warm, agent} {
			if err := sandbox.WaitWarm(context.Background(), l); err != nil {
				b.Fatal(err)
			}
		}
		time.Sleep(gap)
		t0 := time.Now()
		run(b, nil)
		t1 := time.Now()
		run(b, warm)
		t2 := time.Now()
		run(b, agent)
		bare, one, two = bare+t1.Sub(t0), one+t2.Sub(t1), two+time.Since(t2)
		n++
	}
	b.ReportMetric(float64(bare.Nanoseconds())/float64(n), "bare-ns/op")
	b.ReportMetric(float64(one.Nanoseconds())/float64(n), "warm-ns/op")
	b.ReportMetric(float64(two.Nanoseconds())/float64(n), "agent-ns/op")
	b.ReportMetric(float64(one)/float64(bare), "warm/bare")
	b.ReportMetric(float64(two)/float64(bare), "agent/bare")
}

// bashTrue runs `bash -c true` in dir through l, or bare when l is nil,
// and waits for it.
func bashTrue(b *testing.B, bash, dir string, l *sandbox.Launcher) {
	cmd := exec.Command(bash, "-c", "true")
	cmd.Dir = dir
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	if l != nil {
		l.Wrap(cmd, sandbox.Paths{})
	}
	procgroup.Set(cmd)
	start := cmd.Start
	if l != nil {
		start = func() error { return l.Start(cmd) }
	}
	if err := start(); err != nil {
		b.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		b.Fatal(err)
	}
}

package sandbox_test

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

// TestSandboxConfines runs each attack as the unprivileged user through
// the launcher, where it must fail, and with the sandbox off (the control),
// where the same command must succeed: so a refusal proves the sandbox, not
// a missing permission. The "bot" and the "MCP server" are processes of the
// same user that never harden themselves, as the bot with
// PROCESS_ENV_HARDEN_HOST_PROCESS=false.
func TestSandboxConfines(t *testing.T) {
	forEachStart(t, testSandboxConfines)
}

// forEachStart runs test with a cold launcher and with a warm one.
func forEachStart(t *testing.T, test func(t *testing.T, warm bool)) {
	for _, warm := range []bool{false, true} {
		t.Run(map[bool]string{false: "cold", true: "warm"}[warm], func(t *testing.T) { test(t, warm) })
	}
}

func testSandboxConfines(t *testing.T, warm bool) {
	l := newLayoutWith(t, sandbox.Paths{}, warm)
	botSecret, mcpSecret := fakeSecret(t), fakeSecret(t)
	botPid := l.startFakeBot(t, botSecret, false)
	mcpPid := l.startFakeBot(t, mcpSecret, true)
	jobs := filepath.Join(l.agentDir, "jobs.json")
	tests := []struct {
		name   string
		script string
		// minABI is the Landlock ABI the refusal needs.
		minABI int
		// secret must not be in the sandboxed output (and is in the
		// control's).
		secret string
	}{
		{name: "list AGENT_DIR/sessions", script: `ls "$AGENT_DIR/sessions"`},
		{name: "read a transcript", script: `cat "$AGENT_DIR/sessions/chat.jsonl"`},
		{name: "write jobs.json", script: `echo '[{"id":"evil"}]' > "$AGENT_DIR/jobs.json"`},
		{name: "read the bot's environ", script: `tr '\0' '\n' < /proc/$BOT_PID/environ`, secret: botSecret},
		{name: "signal the bot", script: `kill -0 $BOT_PID`, minABI: 6},
		{name: "stop the bot", script: `kill -STOP $BOT_PID && kill -CONT $BOT_PID`, minABI: 6},
		{name: "read an MCP server's environ", script: `tr '\0' '\n' < /proc/$MCP_PID/environ`, secret: mcpSecret},
	}
	env := []string{"AGENT_DIR=" + l.agentDir, "BOT_PID=" + strconv.Itoa(botPid), "MCP_PID=" + strconv.Itoa(mcpPid)}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if abi := sandbox.ABI(); abi < tt.minABI {
				t.Skipf("needs Landlock ABI %d, the kernel has %d", tt.minABI, abi)
			}
			out, err := l.run(t, tt.script, true, env...)
			if err == nil {
				t.Errorf("sandboxed: the command succeeded (output %d bytes), want it refused", len(out))
			}
			if tt.secret != "" && strings.Contains(out, tt.secret) {
				t.Error("sandboxed: the secret leaked into the output")
			}
			if got, _ := os.ReadFile(jobs); string(got) != "[]\n" {
				t.Errorf("sandboxed: jobs.json was changed to %d bytes", len(got))
			}

			out, err = l.run(t, tt.script, false, env...)
			if err != nil {
				t.Errorf("control (sandbox off): %v; output:\n%s", err, out)
			}
			if tt.secret != "" && !strings.Contains(out, tt.secret) {
				t.Errorf("control (sandbox off): the environ read did not show the secret (%d bytes of output)", len(out))
			}
			writePublic(t, jobs, "[]\n")
		})
	}
}

// TestSandboxLeavesNothingBehind checks that what a sandboxed command puts
// in the background, a setsid orphan and a double-forked child, is gone
// once the call has ended, and that without the sandbox (the control) both
// outlive it.
func TestSandboxLeavesNothingBehind(t *testing.T) {
	forEachStart(t, testSandboxLeavesNothingBehind)
}

func testSandboxLeavesNothingBehind(t *testing.T, warm bool) {
	l := newLayoutWith(t, sandbox.Paths{}, warm)
	const script = `setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > setsid.pid
( sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > double.pid ) 
exit 3`
	for _, sandboxed := range []bool{true, false} {
		name := map[bool]string{true: "sandboxed", false: "control (sandbox off)"}[sandboxed]
		t.Run(name, func(t *testing.T) {
			_, err := l.run(t, script, sandboxed)
			if code := exitCode(err); code != 3 {
				t.Errorf("exit code %d (%v), want the command's 3", code, err)
			}
			pids := l.readPids(t, "setsid.pid", "double.pid")
			t.Cleanup(func() {
				for _, pid := range pids {
					_ = unix.Kill(pid, unix.SIGKILL)
				}
			})
			var got []bool
			for _, pid := range pids {
				got = append(got, asusertest.Alive(pid))
			}
			want := []bool{!sandboxed, !sandboxed}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("setsid orphan, double-forked child alive after the call (-want +got):\n%s", diff)
			}
		})
	}
}

// TestSandboxReapsOrphansWhileTheCommandRuns: the orphans a long-running
// command leaves (double-forked children that have ended) are re-parented
// to the launcher, which must reap them while the command still runs, not
// only when it exits; otherwise an MCP server's tree piles up zombies.
func TestSandboxReapsOrphansWhileTheCommandRuns(t *testing.T) {
	forEachStart(t, testSandboxReapsOrphans)
}

func testSandboxReapsOrphans(t *testing.T, warm bool) {
	l := newLayoutWith(t, sandbox.Paths{}, warm)
	// Each subshell forks a child that ends at once and exits itself, so
	// the child ends an orphan of the launcher ($PPID). Then count the
	// launcher's zombie children until there are none, for up to 10 s.
	const script = `for i in 1 2 3; do ( sh -c 'exit 0' & ); done
zombies() {
	n=0
	for f in /proc/[0-9]*/stat; do
		{ read -r line < "$f"; } 2>/dev/null || continue
		set -- ${line##*) }
		[ "$1" = Z ] && [ "$2" = "$PPID" ] && n=$((n+1))
	done
	echo $n
}
for i in $(seq 100); do
	[ "$(zombies)" = 0 ] && break
	sleep 0.1
done
echo "zombies=$(zombies)"`
	out, err := l.run(t, script, true)
	if err != nil {
		t.Fatalf("sandboxed: %v; output:\n%s", err, out)
	}
	if !strings.Contains(out, "zombies=0") {
		t.Errorf("the launcher left its adopted orphans unreaped while the command ran: %s", strings.TrimSpace(out))
	}
}

// exitCode returns the exit code err carries, 0 for nil, -1 otherwise.
func exitCode(err error) int {
	if err == nil {
		return 0
	}
	if e, ok := err.(interface{ ExitCode() int }); ok {
		return e.ExitCode()
	}
	return -1
}

// TestSandboxCarvesHiddenPaths checks that a hidden file inside a
// read-only tree of the view (an MCP configuration under /etc, here under a
// readable addition) is out of reach for a sandboxed process and for the
// file tools, while its siblings and its directory's listing stay
// readable.
func TestSandboxCarvesHiddenPaths(t *testing.T) {
	shared := asusertest.PublicDir(t)
	secret := filepath.Join(shared, "conf", "mcp.json")
	mkdirPublic(t, filepath.Dir(secret))
	writePublic(t, secret, `{"mcpServers":{}}`)
	writePublic(t, filepath.Join(shared, "conf", "other.json"), "{}")
	writePublic(t, filepath.Join(shared, "readme.txt"), "hello")
	l := newLayout(t, sandbox.Paths{Read: []string{shared}})
	view, err := l.launcher.View().Hide(map[string]string{"MCP_CONFIG": secret})
	if err != nil {
		t.Fatal(err)
	}
	if l.launcher, err = sandbox.NewLauncher(l.launcher.Executable(), view); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, script string
		allowed      bool
	}{
		{name: "read the hidden file", script: `cat "$D/conf/mcp.json"`},
		{name: "read a sibling", script: `cat "$D/conf/other.json"`, allowed: true},
		{name: "read the tree's other files", script: `cat "$D/readme.txt"`, allowed: true},
		{name: "list the hidden file's directory", script: `ls "$D/conf" | grep -q other.json`, allowed: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := l.run(t, tt.script, true, "D="+shared)
			if (err == nil) != tt.allowed {
				t.Errorf("sandboxed: %v (output %q), want allowed %v", err, out, tt.allowed)
			}
		})
	}
	if f, err := view.OpenFile(secret, os.O_RDONLY, 0); err == nil {
		f.Close()
		t.Error("the file tools' view opened the hidden file")
	}
	if f, err := view.OpenFile(filepath.Join(shared, "conf", "other.json"), os.O_RDONLY, 0); err != nil {
		t.Errorf("the file tools' view refused a sibling of the hidden file: %v", err)
	} else {
		f.Close()
	}
}

// TestSandboxKeepsItsLauncher: a sandboxed command cannot kill or stop its
// own launcher ($PPID), whose clean-up then still ends the setsid orphan
// the command started before, and whose exit code is the command's. The
// control: without the sandbox the same user kills and stops its parent
// (a subshell).
func TestSandboxKeepsItsLauncher(t *testing.T) {
	forEachStart(t, testSandboxKeepsItsLauncher)
}

func testSandboxKeepsItsLauncher(t *testing.T, warm bool) {
	l := newLayoutWith(t, sandbox.Paths{}, warm)
	const orphan = `setsid sleep 1000 </dev/null >/dev/null 2>&1 & echo $! > setsid.pid; `
	tests := []struct{ name, signal string }{
		{name: "kill", signal: `kill -9 $PPID; echo "signal=$?"`},
		{name: "stop", signal: `kill -STOP $PPID; echo "signal=$?"; kill -CONT $PPID`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := l.run(t, orphan+tt.signal+"; exit 3", true)
			pid := l.readPids(t, "setsid.pid")[0]
			t.Cleanup(func() { _ = unix.Kill(pid, unix.SIGKILL) })
			if code := exitCode(err); code != 3 {
				t.Errorf("sandboxed: exit code %d (%v), want the command's 3 from its launcher", code, err)
			}
			if !strings.Contains(out, "signal=1") {
				t.Errorf("sandboxed: the launcher was signalled, want it refused; output:\n%s", out)
			}
			if asusertest.Alive(pid) {
				t.Errorf("sandboxed: the setsid orphan %d outlived the call", pid)
			}

			out, err = l.run(t, `( sh -c "$S"; : )`, false, "S="+tt.signal)
			if !strings.Contains(out, "signal=0") {
				t.Errorf("control (sandbox off): the parent was not signalled (%v); output:\n%s", err, out)
			}
		})
	}
}

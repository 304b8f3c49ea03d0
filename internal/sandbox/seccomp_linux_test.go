package sandbox_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/volcanic/telegram-agent/internal/asusertest"
	"github.com/volcanic/telegram-agent/internal/procgroup"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// TestProcessCallsRefused makes each call of the filter's table, one
// launch each, as the unprivileged user through the launcher: on 0, on the
// caller itself and on another process of the same user (the fake bot,
// which never hardens itself). The filter refuses the other process and
// lets the caller's own through; the control, the same probe without the
// sandbox, shows the kernel itself would allow the call on the other
// process, so the refusal is the filter's. The calls on a user or a
// process group, and those through a pidfd, are refused whatever they
// name.
func TestProcessCallsRefused(t *testing.T) {
	if got := sandbox.Seccomp(); got != sandbox.SeccompSupervised {
		t.Skipf("the kernel has no seccomp listener (%s)", got)
	}
	l := newLayout(t, sandbox.Paths{})
	other := l.startFakeBot(t, fakeSecret(t), false)
	const ok, refused = "allowed", "refused"
	tests := []struct {
		name, zero, self string
		// control is what the kernel alone answers on the other
		// process: allowed but for process_madvise, which needs
		// CAP_SYS_NICE for another process.
		control string
	}{
		{"prlimit64", ok, ok, ""},
		{"setpriority", ok, ok, ""},
		{"setpriority/group", refused, refused, ""},
		{"setpriority/joined-group", refused, refused, ""},
		{"setpriority/user", refused, refused, ""},
		{"sched_setaffinity", ok, ok, ""},
		{"sched_setparam", ok, ok, ""},
		{"sched_setscheduler", ok, ok, ""},
		{"sched_setattr", ok, ok, ""},
		{"ioprio_set", ok, ok, ""},
		{"ioprio_set/group", refused, refused, ""},
		{"ioprio_set/user", refused, refused, ""},
		{"process_vm_readv", ok, ok, ""},
		{"process_vm_writev", ok, ok, ""},
		{"migrate_pages", ok, ok, ""},
		{"move_pages", ok, ok, ""},
		{"get_robust_list", ok, ok, ""},
		{"perf_event_open", ok, ok, ""},
		{"kcmp", ok, ok, ""},
		{"process_madvise", refused, refused, refused},
		{"process_mrelease", refused, refused, ""},
		{"pidfd_getfd", refused, refused, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := l.probe(t, tt.name, other, true)
			want := map[string]string{"zero": tt.zero, "self": tt.self, "other": refused}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("sandboxed (-want +got):\n%s", diff)
			}
			control := tt.control
			if control == "" {
				control = ok
			}
			if got := l.probe(t, tt.name, other, false)["other"]; got != control {
				t.Errorf("control (sandbox off): the call on the other process was %s, want %s by the kernel", got, control)
			}
		})
	}
}

// probe runs the process call probe of name as the unprivileged user,
// through the launcher when sandboxed, and returns for each target
// whether the call was refused (EPERM) or allowed (anything else: the
// kernel went on to answer it).
func (l *layout) probe(t *testing.T, name string, other int, sandboxed bool) map[string]string {
	t.Helper()
	var launcher *sandbox.Launcher
	if sandboxed {
		launcher = l.launcher
	}
	return l.probeWith(t, launcher, name, other)
}

// probeWith is probe through launcher, without the sandbox when nil.
func (l *layout) probeWith(t *testing.T, launcher *sandbox.Launcher, name string, other int) map[string]string {
	t.Helper()
	cmd := exec.Command(l.launcher.Executable(), "seccomp-probe", name, strconv.Itoa(other))
	cmd.Dir = l.workspace
	cmd.Env = []string{"PATH=" + testPATH}
	if launcher != nil {
		launcher.Wrap(cmd, sandbox.Paths{Read: []string{filepath.Dir(l.launcher.Executable())}})
	}
	procgroup.Set(cmd)
	if asusertest.Needed() {
		asusertest.Drop(cmd)
	}
	cmd.Stderr = os.Stderr
	out, err := asusertestOutput(t, cmd)
	if err != nil {
		t.Fatalf("probe %s: %v", name, err)
	}
	got := map[string]string{}
	for _, f := range strings.Fields(string(out)) {
		k, v, _ := strings.Cut(f, "=")
		n, err := strconv.Atoi(v)
		if err != nil {
			t.Fatalf("probe %s printed %q", name, out)
		}
		got[k] = map[bool]string{true: "refused", false: "allowed"}[unix.Errno(n) == unix.EPERM]
	}
	return got
}

// asusertestOutput runs cmd as asusertest.Run does and returns its
// standard output.
func asusertestOutput(t *testing.T, cmd *exec.Cmd) ([]byte, error) {
	t.Helper()
	var out strings.Builder
	cmd.Stdout = &out
	err := asusertest.Run(t, cmd)
	return []byte(out.String()), err
}

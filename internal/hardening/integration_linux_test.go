package hardening

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// nobody is the unprivileged uid and gid the helpers run as when the tests
// run as root. It needs no passwd entry.
const nobody = 65534

// helperTimeout bounds how long a helper may take to report.
const helperTimeout = 30 * time.Second

// TestKernelRefusesSameUserReads runs the test binary as a hardened helper and
// as an unhardened control, each with a fake secret in its environment, and
// has a reader with the same uid open their /proc/<pid>/environ and mem. The
// kernel must refuse the hardened helper's files with EACCES and serve the
// control's, with the secret in its environ, so the test cannot pass by
// accident.
func TestKernelRefusesSameUserReads(t *testing.T) {
	r := newRunner(t)
	marker := rand.Text()
	tests := []struct {
		name         string
		mode         string
		wantDumpable bool
	}{
		{name: "hardened", mode: modeHardened, wantDumpable: false},
		{name: "control", mode: modeControl, wantDumpable: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := r.startHelper(t, tt.mode, marker)
			if h.Err != "" || h.Dumpable != tt.wantDumpable {
				t.Fatalf("helper reports dumpable %v (error %q), want %v", h.Dumpable, h.Err, tt.wantDumpable)
			}
			environ := r.read(t, modeRead, fmt.Sprintf("/proc/%d/environ", h.PID))
			mem := r.read(t, modeOpen, fmt.Sprintf("/proc/%d/mem", h.PID))
			found := bytes.Contains(environ.Data, []byte(markerVar+"="+marker))
			if !tt.wantDumpable {
				if environ.Errno != int(syscall.EACCES) || len(environ.Data) != 0 || found {
					t.Errorf("reading the hardened helper's environ: errno %d (%s), %d bytes, marker found %v; want EACCES, 0 bytes, not found",
						environ.Errno, environ.Err, len(environ.Data), found)
				}
				if mem.Errno != int(syscall.EACCES) {
					t.Errorf("opening the hardened helper's mem: errno %d (%s), want EACCES", mem.Errno, mem.Err)
				}
				return
			}
			if environ.Errno != 0 || !found {
				t.Errorf("reading the control's environ: errno %d (%s), %d bytes, marker found %v; want it read with the marker",
					environ.Errno, environ.Err, len(environ.Data), found)
			}
			if scope := yamaPtraceScope(); scope >= 2 {
				t.Logf("Yama ptrace_scope is %d: only an admin may open another process's mem, so the control's mem is not checked", scope)
			} else if mem.Errno != 0 {
				t.Errorf("opening the control's mem: errno %d (%s), want success", mem.Errno, mem.Err)
			}
		})
	}
}

// TestChildOfHardenedProcessIsDumpable checks that execve resets the flag: a
// hardened helper's child runs dumpable, so the agent's programs keep working.
func TestChildOfHardenedProcessIsDumpable(t *testing.T) {
	r := newRunner(t)
	cmd := r.command(modeSpawn)
	out, stderr, err := r.run(t, cmd)
	if err != nil {
		t.Fatalf("spawn helper: %v; stderr:\n%s", err, stderr.String())
	}
	var h helperReport
	if err := json.Unmarshal(out, &h); err != nil {
		t.Fatalf("spawn helper output %q: %v", out, err)
	}
	r.checkEUID(t, "spawn helper", h.EUID)
	switch {
	case h.Err != "":
		t.Fatalf("spawn helper: %s; stderr:\n%s", h.Err, stderr.String())
	case h.Dumpable:
		t.Fatal("the spawn helper is dumpable after Apply(true), want hardened")
	case h.ChildDumpable == nil:
		t.Fatal("the spawn helper reports nothing about its child")
	case !*h.ChildDumpable:
		t.Fatal("the hardened helper's child is not dumpable after execve, want dumpable")
	}
}

// runner starts copies of the test binary as helpers and readers, as an
// unprivileged user when the test runs as root.
type runner struct {
	dir  string
	bin  string
	cred *syscall.Credential
	euid int
}

// newRunner copies the test binary into a fresh directory that the helpers'
// uid can enter and execute: an unreadable binary would make execve leave
// the helpers non-dumpable, and the copy under root's build cache may not
// be reachable by that uid at all.
func newRunner(t *testing.T) *runner {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatalf("find the test binary: %v", err)
	}
	dir, err := os.MkdirTemp("", "hardening-test-")
	if err != nil {
		t.Fatalf("make a temp dir: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatalf("chmod the temp dir: %v", err)
	}
	r := &runner{dir: dir, bin: filepath.Join(dir, "hardening.test"), euid: os.Geteuid()}
	if err := copyFile(exe, r.bin); err != nil {
		t.Fatalf("copy the test binary: %v", err)
	}
	t.Cleanup(func() {
		if d, err := Dumpable(); err != nil || !d {
			t.Errorf("the test runner is left dumpable %v (error %v), want true", d, err)
		}
	})
	if r.euid == 0 {
		r.cred = &syscall.Credential{Uid: nobody, Gid: nobody}
		r.euid = nobody
	}
	return r
}

// command returns a command that runs the binary copy in mode.
func (r *runner) command(mode string, env ...string) *exec.Cmd {
	cmd := exec.Command(r.bin)
	cmd.Dir = r.dir
	cmd.Env = append([]string{modeVar + "=" + mode, "PATH=/usr/bin:/bin"}, env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: r.cred}
	return cmd
}

// start starts cmd and keeps the test runner dumpable. Go starts a child
// with a vfork-style clone that shares the runner's memory descriptor until
// execve, and the kernel keeps the dumpable flag there: the child's setuid to
// the unprivileged uid resets the runner's flag too. start puts it back.
func (r *runner) start(t *testing.T, cmd *exec.Cmd) error {
	t.Helper()
	before, err := Dumpable()
	if err != nil {
		t.Fatalf("read the runner's dumpable flag: %v", err)
	}
	startErr := cmd.Start()
	if after, err := Dumpable(); err == nil && after != before {
		if err := unix.Prctl(unix.PR_SET_DUMPABLE, boolArg(before), 0, 0, 0); err != nil {
			t.Fatalf("restore the runner's dumpable flag: %v", err)
		}
	}
	return startErr
}

// run starts cmd through start, waits for it and returns its output.
func (r *runner) run(t *testing.T, cmd *exec.Cmd) (stdout []byte, stderr *bytes.Buffer, err error) {
	t.Helper()
	var out bytes.Buffer
	stderr = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = &out, stderr
	if err := r.start(t, cmd); err != nil {
		return nil, stderr, err
	}
	err = cmd.Wait()
	return out.Bytes(), stderr, err
}

// boolArg is b as a prctl argument.
func boolArg(b bool) uintptr {
	if b {
		return 1
	}
	return 0
}

// checkEUID fails the test unless a process ran as the unprivileged uid.
func (r *runner) checkEUID(t *testing.T, what string, euid int) {
	t.Helper()
	if euid != r.euid {
		t.Fatalf("%s ran as euid %d, want %d", what, euid, r.euid)
	}
}

// startHelper starts a helper in mode with the marker in its environment,
// waits for its report and stops it when the test ends.
func (r *runner) startHelper(t *testing.T, mode, marker string) helperReport {
	t.Helper()
	cmd := r.command(mode, markerVar+"="+marker)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatalf("helper stdin: %v", err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatalf("helper stdout: %v", err)
	}
	if err := r.start(t, cmd); err != nil {
		t.Fatalf("start helper %s: %v", mode, err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("helper %s: %v; stderr:\n%s", mode, err, stderr.String())
			}
		case <-time.After(helperTimeout):
			cmd.Process.Kill()
			<-done
			t.Errorf("helper %s did not exit after its stdin closed", mode)
		}
	})
	lines := make(chan []byte, 1)
	go func() {
		line, _ := bufio.NewReader(stdout).ReadBytes('\n')
		lines <- line
		io.Copy(io.Discard, stdout)
	}()
	var h helperReport
	select {
	case line := <-lines:
		if err := json.Unmarshal(line, &h); err != nil {
			t.Fatalf("helper %s report %q: %v", mode, line, err)
		}
	case <-time.After(helperTimeout):
		t.Fatalf("helper %s did not report within %v", mode, helperTimeout)
	}
	if h.PID != cmd.Process.Pid {
		t.Fatalf("helper %s reports pid %d, started as %d", mode, h.PID, cmd.Process.Pid)
	}
	r.checkEUID(t, "helper "+mode, h.EUID)
	return h
}

// read runs a reader in mode (modeOpen or modeRead) on path.
func (r *runner) read(t *testing.T, mode, path string) readerReport {
	t.Helper()
	cmd := r.command(mode, pathVar+"="+path)
	out, stderr, err := r.run(t, cmd)
	if err != nil {
		t.Fatalf("reader %s %s: %v; stderr:\n%s", mode, path, err, stderr.String())
	}
	var rep readerReport
	if err := json.Unmarshal(out, &rep); err != nil {
		t.Fatalf("reader %s %s: %d bytes that do not parse: %v", mode, path, len(out), err)
	}
	r.checkEUID(t, "reader", rep.EUID)
	return rep
}

// copyFile copies the file src to a new executable file dst.
func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("open %s: %w", src, err)
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return fmt.Errorf("create %s: %w", dst, err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("copy to %s: %w", dst, err)
	}
	if err := out.Close(); err != nil {
		return fmt.Errorf("close %s: %w", dst, err)
	}
	return nil
}

// yamaPtraceScope reads Yama's ptrace_scope, 0 when Yama is absent.
func yamaPtraceScope() int {
	b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

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

	"github.com/volcanic/telegram-agent/internal/asusertest"
)

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

// runner starts copies of the test binary as helpers and readers, as the
// unprivileged asusertest.UID when the test runs as root.
type runner struct {
	dir  string
	bin  string
	drop bool
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
	r := &runner{bin: asusertest.PublicCopy(t, exe, 0o755), euid: os.Geteuid()}
	r.dir = filepath.Dir(r.bin)
	if asusertest.Needed() {
		r.drop = true
		r.euid = asusertest.UID
	}
	return r
}

// command returns a command that runs the binary copy in mode.
func (r *runner) command(mode string, env ...string) *exec.Cmd {
	cmd := exec.Command(r.bin)
	cmd.Dir = r.dir
	cmd.Env = append([]string{modeVar + "=" + mode, "PATH=/usr/bin:/bin"}, env...)
	if r.drop {
		asusertest.Drop(cmd)
	}
	return cmd
}

// run runs cmd with asusertest.Run, which keeps the test runner dumpable,
// and returns its output.
func (r *runner) run(t *testing.T, cmd *exec.Cmd) (stdout []byte, stderr *bytes.Buffer, err error) {
	t.Helper()
	var out bytes.Buffer
	stderr = &bytes.Buffer{}
	cmd.Stdout, cmd.Stderr = &out, stderr
	err = asusertest.Run(t, cmd)
	return out.Bytes(), stderr, err
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
	if err := asusertest.Start(t, cmd); err != nil {
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

// yamaPtraceScope reads Yama's ptrace_scope, 0 when Yama is absent.
func yamaPtraceScope() int {
	b, err := os.ReadFile("/proc/sys/kernel/yama/ptrace_scope")
	if err != nil {
		return 0
	}
	n, _ := strconv.Atoi(strings.TrimSpace(string(b)))
	return n
}

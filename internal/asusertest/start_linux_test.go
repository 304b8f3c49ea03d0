package asusertest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
)

// reportVar, set to "1" in the test binary's environment, makes it print
// its real and effective uid and gid instead of running the tests.
const reportVar = "ASUSERTEST_REPORT"

func TestMain(m *testing.M) {
	if os.Getenv(reportVar) == "1" {
		fmt.Println(ids(os.Getuid(), os.Geteuid(), os.Getgid(), os.Getegid()))
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// ids formats a process's real and effective uid and gid.
func ids(uid, euid, gid, egid int) string {
	return fmt.Sprintf("uid=%d euid=%d gid=%d egid=%d", uid, euid, gid, egid)
}

func TestDrop(t *testing.T) {
	tests := []struct {
		name string
		attr *syscall.SysProcAttr
	}{
		{name: "no SysProcAttr"},
		{name: "other fields kept", attr: &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("true")
			cmd.SysProcAttr = tt.attr
			var want syscall.SysProcAttr
			if tt.attr != nil {
				want = *tt.attr
			}
			Drop(cmd)
			got := cmd.SysProcAttr
			if got == nil || got.Credential == nil {
				t.Fatal("Drop set no credential")
			}
			if got.Credential.Uid != UID || got.Credential.Gid != GID || len(got.Credential.Groups) != 0 {
				t.Errorf("credential %+v, want uid %d, gid %d and no groups", *got.Credential, UID, GID)
			}
			if got.Setpgid != want.Setpgid || got.Pdeathsig != want.Pdeathsig {
				t.Errorf("Drop changed other fields: Setpgid %v, Pdeathsig %v; want %v, %v",
					got.Setpgid, got.Pdeathsig, want.Setpgid, want.Pdeathsig)
			}
		})
	}
}

// TestChildRunsAsUID runs a copy of the test binary as UID through each way
// of starting it: the child must report UID and GID, and the test runner
// must still be dumpable right after, not only at the cleanup.
func TestChildRunsAsUID(t *testing.T) {
	if !Needed() {
		t.Skip("needs root, to start a child as another user")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := PublicCopy(t, exe, 0o755)
	tests := []struct {
		name string
		run  func(t *testing.T, cmd *exec.Cmd) ([]byte, error)
	}{
		{name: "Start", run: func(t *testing.T, cmd *exec.Cmd) ([]byte, error) {
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := Start(t, cmd); err != nil {
				return nil, err
			}
			err := cmd.Wait()
			return out.Bytes(), err
		}},
		{name: "Run", run: func(t *testing.T, cmd *exec.Cmd) ([]byte, error) {
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			err := Run(t, cmd)
			return out.Bytes(), err
		}},
		{name: "CombinedOutput", run: func(t *testing.T, cmd *exec.Cmd) ([]byte, error) {
			return CombinedOutput(t, cmd)
		}},
	}
	want := ids(UID, UID, GID, GID)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command(bin)
			cmd.Dir = "/"
			cmd.Env = []string{reportVar + "=1", "GORACE=atexit_sleep_ms=0"}
			Drop(cmd)
			out, err := tt.run(t, cmd)
			if err != nil {
				t.Fatalf("the child: %v\n%s", err, out)
			}
			if got := strings.TrimSpace(string(out)); got != want {
				t.Errorf("the child reports %q, want %q", got, want)
			}
			if d, err := dumpable(); err != nil || !d {
				t.Errorf("the test runner is dumpable %v (error %v) right after the child, want true", d, err)
			}
		})
	}
}

func TestCombinedOutputRefusesSetOutput(t *testing.T) {
	cmd := exec.Command("true")
	cmd.Stdout = &bytes.Buffer{}
	if _, err := CombinedOutput(t, cmd); err == nil || !strings.Contains(err.Error(), "already set") {
		t.Errorf("CombinedOutput with Stdout set = %v, want an error saying it is already set", err)
	}
	if cmd.Process != nil {
		t.Error("CombinedOutput started the command anyway")
	}
}

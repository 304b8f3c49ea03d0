package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/sandbox"
	"github.com/volcanic/telegram-agent/internal/spawnpolicy"
)

// TestParseSandbox checks the AGENT_SANDBOX* variables and the start-up
// error for an AGENT_DIR the sandbox could not hide.
func TestParseSandbox(t *testing.T) {
	tests := []struct {
		name              string
		mode, read, write string
		agentDir          string
		wantMode          sandbox.Mode
		wantRead, wantErr string
	}{
		{name: "the default", agentDir: "/data", wantMode: sandbox.Auto},
		{name: "required with additions", mode: " Required ", read: "/srv/a, /srv/b/", write: "/cache", agentDir: "/data", wantMode: sandbox.Required, wantRead: "/srv/a,/srv/b"},
		{name: "an unknown mode", mode: "sometimes", agentDir: "/data", wantErr: "AGENT_SANDBOX must be auto, required or off"},
		{name: "a relative addition", read: "srv", agentDir: "/data", wantErr: `AGENT_SANDBOX_READ: "srv" is not an absolute path`},
		{name: "AGENT_DIR inside the workspace", agentDir: "/workspace/data", wantErr: "AGENT_DIR (/workspace/data) is inside WORKSPACE_DIR (/workspace)"},
		{name: "AGENT_DIR inside the workspace, sandbox off", mode: "off", agentDir: "/workspace/data", wantMode: sandbox.Off},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := Env{AgentSandbox: tt.mode, AgentSandboxRead: tt.read, AgentSandboxWrite: tt.write}
			got, err := parseSandbox(e, tt.agentDir, "/workspace")
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parseSandbox: %v, want an error with %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseSandbox: %v", err)
			}
			if got.Mode != tt.wantMode || strings.Join(got.Read, ",") != tt.wantRead {
				t.Errorf("parseSandbox = mode %s, read %q; want %s, %q", got.Mode, got.Read, tt.wantMode, tt.wantRead)
			}
		})
	}
}

// TestSetupSandbox checks the start-up line, that an MCP configuration
// file under /etc is carved out of the view, and that one in a writable
// tree is a start-up error.
func TestSetupSandbox(t *testing.T) {
	if sandbox.ABI() == 0 {
		t.Skip("the kernel has no Landlock")
	}
	base := Config{AgentDir: filepath.Join(t.TempDir(), "data"), WorkspaceDir: t.TempDir()}
	box, err := setupSandbox(base, map[string]string{"PATH": "/usr/bin:/bin"})
	if err != nil {
		t.Fatal(err)
	}
	if want := "Agent sandbox: landlock ABI "; !strings.HasPrefix(box.line, want) || !strings.HasSuffix(box.line, ", view: workspace rw, system ro") || box.launcher == nil {
		t.Errorf("start-up line %q (launcher %v), want %q..., view: workspace rw, system ro", box.line, box.launcher != nil, want)
	}
	etc := base
	etc.MCPConfig = "/etc/telegram-agent/mcp.json"
	if box, err := setupSandbox(etc, nil); err != nil || box.view == nil || !slices.Contains(box.view.Hidden, etc.MCPConfig) {
		t.Errorf("setupSandbox with MCP_CONFIG under /etc: %v, want it hidden in the view", err)
	}
	exposed := base
	exposed.MCPConfig = filepath.Join(base.WorkspaceDir, "mcp.json")
	if _, err := setupSandbox(exposed, nil); err == nil || !strings.Contains(err.Error(), "MCP_CONFIG ("+exposed.MCPConfig+") is inside the workspace") {
		t.Errorf("setupSandbox with MCP_CONFIG in the workspace: %v, want the start-up error", err)
	}
	off := base
	off.Sandbox.Mode = sandbox.Off
	if box, err := setupSandbox(off, nil); err != nil || box.launcher != nil || !strings.Contains(box.line, "Agent sandbox: off") {
		t.Errorf("setupSandbox(off) = %q, launcher %v, %v", box.line, box.launcher != nil, err)
	}
}

// TestDoctorSandbox runs the doctor's live probe on the real kernel: each
// attempt of the sandboxed child must be refused (as root, reading the
// doctor's environ is allowed on this kernel and reported as a warning).
func TestDoctorSandbox(t *testing.T) {
	if sandbox.ABI() < 6 {
		t.Skipf("needs Landlock ABI 6 for the signal check, the kernel has %d", sandbox.ABI())
	}
	e := goodEnv()
	e.AgentDir = filepath.Join(t.TempDir(), "data")
	e.WorkspaceDir = t.TempDir()
	if err := os.MkdirAll(e.AgentDir, 0o700); err != nil {
		t.Fatal(err)
	}
	jobs := filepath.Join(e.AgentDir, "jobs.json")
	if err := os.WriteFile(jobs, []byte("[]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, _ := runDoctorWith(t, e, func(context.Context, *spawnpolicy.Policy) error { return nil })
	want := []string{
		"Agent sandbox (AGENT_SANDBOX=auto)",
		"view: workspace rw, system ro",
		"rw " + e.WorkspaceDir + " (workspace)",
		"✔ list AGENT_DIR: refused",
		"✔ write jobs.json: refused",
		"✔ signal the doctor (kill -0): refused",
		"network confinement to the egress proxy: ",
		// One uid: Landlock has no right for a mode, and the owner
		// may change it; the bot restores it.
		"✘ change AGENT_DIR's mode (chmod): allowed",
		"the bot restores them at start and when a write is refused",
	}
	if sandbox.Seccomp() != sandbox.SeccompNone {
		want = append(want, "✔ read or set the doctor's limits (prlimit --pid): refused")
	}
	if os.Geteuid() == 0 {
		want = append(want, "the doctor runs as root, and Landlock does not keep a root child")
	} else {
		want = append(want, "✔ read the doctor's /proc/<pid>/environ: refused")
	}
	for _, w := range want {
		if !strings.Contains(out, w) {
			t.Errorf("output lacks %q; output:\n%s", w, out)
		}
	}
	if data, err := os.ReadFile(jobs); err != nil || string(data) != "[]\n" {
		t.Errorf("the probe changed jobs.json (%d bytes, %v)", len(data), err)
	}
	assertNoSecrets(t, out)
}

// TestSandboxWithoutLandlock checks the modes on a kernel without Landlock:
// auto starts unconfined with one warning that says what is missing, and
// doctor counts it a problem; required refuses to start.
func TestSandboxWithoutLandlock(t *testing.T) {
	noLandlock := func() int { return 0 }
	cfg := Config{AgentDir: filepath.Join(t.TempDir(), "data"), WorkspaceDir: t.TempDir()}
	box, err := buildSandbox(cfg, nil, noLandlock)
	if err != nil || box.launcher != nil || box.view != nil || !box.warn || !strings.Contains(box.line, "the kernel offers no Landlock") {
		t.Errorf("auto without Landlock = %q (warn %v, launcher %v, view %v), %v; want one warning and no sandbox", box.line, box.warn, box.launcher != nil, box.view != nil, err)
	}
	var out strings.Builder
	r := &report{w: &out}
	doctorSandboxProbe(context.Background(), r, cfg, nil, box)
	if len(r.problems) != 1 || !strings.Contains(out.String(), "PROBLEM: Agent sandbox: not available") {
		t.Errorf("doctor with auto without Landlock: %d problems, output %q; want the unconfined agent as one PROBLEM", len(r.problems), out.String())
	}
	cfg.Sandbox.Mode = sandbox.Required
	if _, err := buildSandbox(cfg, nil, noLandlock); err == nil || !strings.Contains(err.Error(), "AGENT_SANDBOX=required but the kernel offers no Landlock") {
		t.Errorf("required without Landlock: %v, want the start-up error", err)
	}
}

package spawnpolicy

import (
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestApplyTo(t *testing.T) {
	tests := []struct {
		name    string
		ctx     Context
		wantDir string
		wantEnv []string
	}{
		{
			name:    "sorted name=value entries and the working directory",
			ctx:     Context{Command: "env", Cwd: "/work", Env: map[string]string{"PATH": "/bin", "HOME": "/home/bot", "EMPTY": "", "EQ": "a=b"}},
			wantDir: "/work",
			wantEnv: []string{"EMPTY=", "EQ=a=b", "HOME=/home/bot", "PATH=/bin"},
		},
		{
			name:    "an empty environment is an empty, non-nil Env",
			ctx:     Context{Command: "env", Cwd: "/", Env: map[string]string{}},
			wantDir: "/",
			wantEnv: []string{},
		},
		{
			name:    "even a nil map never leaves Env nil",
			ctx:     Context{Command: "env", Cwd: "/"},
			wantDir: "/",
			wantEnv: []string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmd := exec.Command("env")
			cmd.Env = []string{"INHERITED=1"}
			tt.ctx.ApplyTo(cmd)
			if cmd.Env == nil {
				t.Fatal("cmd.Env is nil: the child would inherit the host environment")
			}
			if cmd.Dir != tt.wantDir {
				t.Errorf("cmd.Dir = %q, want %q", cmd.Dir, tt.wantDir)
			}
			if diff := cmp.Diff(tt.wantEnv, cmd.Env); diff != "" {
				t.Errorf("cmd.Env (-want +got):\n%s", diff)
			}
		})
	}
}

// TestApplyToRealChild runs env with a prepared context and checks that the
// child sees exactly the prepared environment and nothing it could inherit.
func TestApplyToRealChild(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("env is a Unix command")
	}
	envPath, err := exec.LookPath("env")
	if err != nil {
		t.Skipf("no env command: %v", err)
	}
	opts := DefaultOptions()
	opts.SecretValues = []string{secretAlias}
	p := newTestPolicy(t, opts, nil, with(hostEnv(), "ALIAS", secretAlias))
	req := Request{
		Purpose:    BashTool,
		Command:    envPath,
		Cwd:        t.TempDir(),
		Env:        map[string]*string{"EXPLICIT": ptr("yes"), "LANG": nil},
		TimeZoneID: "Europe/Berlin",
	}
	prepared, err := p.Prepare(req)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	cmd := exec.Command(prepared.Command, prepared.Args...)
	prepared.ApplyTo(cmd)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("running env: %v", err)
	}
	got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
	slices.Sort(got)
	for i := range got {
		got[i] = maskValue(got[i])
	}
	want := []string{
		"EXPLICIT=yes",
		"HOME=/home/bot",
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"PLAYWRIGHT_BROWSERS_PATH=/ms-playwright",
		"TELEGRAM_ALLOWED_USER_IDS=42,43",
		"TOKENIZERS_PARALLELISM=false",
		"TZ=Europe/Berlin",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the child's environment (-want +got):\n%s", diff)
	}
}

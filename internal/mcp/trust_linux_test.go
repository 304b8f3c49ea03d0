package mcp

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/asusertest"
)

// trustConfig is a valid configuration with one server.
const trustConfig = `{"mcpServers": {"s": {"command": "x"}}}`

// TestLoadTrust runs the loader, for real, as the unprivileged user
// asusertest.UID (the test runs as root, as CI does) against configuration
// files that user could or could not change.
func TestLoadTrust(t *testing.T) {
	if !asusertest.Needed() {
		t.Skip("needs root, to run the loader as another user")
	}
	exe := asusertest.PublicCopy(t, testBinary(t), 0o755)
	tests := []struct {
		name string
		// setup builds the case under its own root-owned 0755 directory (an
		// asusertest.PublicDir)
		// and returns the path Load is given.
		setup func(t *testing.T, dir string) string
		// want is loadAccepted or loadRefused.
		want string
		// has are what the output must name.
		has []string
	}{
		{
			name: "root-owned file in a root-owned directory",
			setup: func(t *testing.T, dir string) string {
				return writeConfig(t, filepath.Join(dir, "mcp.json"), 0o644, 0)
			},
			want: loadAccepted, has: []string{"1"},
		},
		{
			name: "directory of the bot's user",
			setup: func(t *testing.T, dir string) string {
				sub := filepath.Join(dir, "agent")
				mkdirOwned(t, sub, asusertest.UID)
				return writeConfig(t, filepath.Join(sub, "mcp.json"), 0o644, 0)
			},
			want: loadRefused, has: []string{"agent", "belongs to the bot's user", "uid 65534", "chown root:root"},
		},
		{
			name: "file of the bot's user, read-only",
			setup: func(t *testing.T, dir string) string {
				return writeConfig(t, filepath.Join(dir, "mcp.json"), 0o444, asusertest.UID)
			},
			want: loadRefused, has: []string{"the file", "belongs to the bot's user"},
		},
		{
			name: "world-writable file",
			setup: func(t *testing.T, dir string) string {
				path := writeConfig(t, filepath.Join(dir, "mcp.json"), 0o644, 0)
				if err := os.Chmod(path, 0o666); err != nil {
					t.Fatal(err)
				}
				return path
			},
			want: loadRefused, has: []string{"writable by the bot's user"},
		},
		{
			name: "world-writable directory",
			setup: func(t *testing.T, dir string) string {
				sub := filepath.Join(dir, "open")
				mkdirOwned(t, sub, 0)
				if err := os.Chmod(sub, 0o777); err != nil {
					t.Fatal(err)
				}
				return writeConfig(t, filepath.Join(sub, "mcp.json"), 0o644, 0)
			},
			want: loadRefused, has: []string{"open", "can be replaced"},
		},
		{
			name: "sticky world-writable directory, root's file",
			setup: func(t *testing.T, dir string) string {
				sub := filepath.Join(dir, "sticky")
				mkdirOwned(t, sub, 0)
				if err := os.Chmod(sub, 0o777|os.ModeSticky); err != nil {
					t.Fatal(err)
				}
				return writeConfig(t, filepath.Join(sub, "mcp.json"), 0o644, 0)
			},
			want: loadAccepted,
		},
		{
			name: "link in the bot's directory to a trusted file",
			setup: func(t *testing.T, dir string) string {
				target := writeConfig(t, filepath.Join(dir, "mcp.json"), 0o644, 0)
				sub := filepath.Join(dir, "agent")
				mkdirOwned(t, sub, asusertest.UID)
				link := filepath.Join(sub, "mcp.json")
				if err := os.Symlink(target, link); err != nil {
					t.Fatal(err)
				}
				return link
			},
			want: loadRefused, has: []string{"agent", "belongs to the bot's user"},
		},
		{
			name: "trusted link to a file in the bot's directory",
			setup: func(t *testing.T, dir string) string {
				sub := filepath.Join(dir, "agent")
				mkdirOwned(t, sub, asusertest.UID)
				target := writeConfig(t, filepath.Join(sub, "mcp.json"), 0o644, 0)
				link := filepath.Join(dir, "mcp.json")
				if err := os.Symlink(target, link); err != nil {
					t.Fatal(err)
				}
				return link
			},
			want: loadRefused, has: []string{"agent", "belongs to the bot's user"},
		},
		{
			name: "missing file in the bot's directory",
			setup: func(t *testing.T, dir string) string {
				sub := filepath.Join(dir, "agent")
				mkdirOwned(t, sub, asusertest.UID)
				return filepath.Join(sub, "mcp.json")
			},
			want: loadAccepted, has: []string{"0"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := tt.setup(t, asusertest.PublicDir(t))
			out := loadAsOther(t, exe, path)
			verdict, detail, _ := strings.Cut(strings.TrimSpace(out), " ")
			if verdict != tt.want {
				t.Fatalf("outcome %q, want %q; output: %s", verdict, tt.want, out)
			}
			for _, want := range tt.has {
				if !strings.Contains(detail, want) {
					t.Errorf("the output lacks %q: %s", want, out)
				}
			}
		})
	}
}

// TestLoadTrustAsRoot checks that, as root, the check is skipped with a
// warning naming the file.
func TestLoadTrustAsRoot(t *testing.T) {
	if !asusertest.Needed() {
		t.Skip("needs root")
	}
	dir := asusertest.PublicDir(t)
	mkdirOwned(t, filepath.Join(dir, "agent"), asusertest.UID)
	path := writeConfig(t, filepath.Join(dir, "agent", "mcp.json"), 0o666, asusertest.UID)
	cfg, err := Load(path, nil, nil)
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if len(cfg.Warnings) != 1 || !strings.Contains(cfg.Warnings[0], path) || !strings.Contains(cfg.Warnings[0], "root") {
		t.Errorf("warnings = %q, want one naming the file and root", cfg.Warnings)
	}
}

// loadAsOther runs the test binary exe as asusertest.UID to load path, and
// returns its output.
func loadAsOther(t *testing.T, exe, path string) string {
	t.Helper()
	cmd := exec.Command(exe, loadAsArg, path)
	cmd.Env = []string{"GORACE=atexit_sleep_ms=0"}
	cmd.Dir = "/"
	asusertest.Drop(cmd)
	out, err := asusertest.CombinedOutput(t, cmd)
	if err != nil {
		t.Fatalf("running the loader as uid %d: %v\n%s", asusertest.UID, err, out)
	}
	return string(out)
}

// mkdirOwned creates dir, 0755, owned by uid.
func mkdirOwned(t *testing.T, dir string, uid int) {
	t.Helper()
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(dir, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// writeConfig writes trustConfig to path with perm, owned by uid, and
// returns path.
func writeConfig(t *testing.T, path string, perm os.FileMode, uid int) string {
	t.Helper()
	if err := os.WriteFile(path, []byte(trustConfig), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
	return path
}

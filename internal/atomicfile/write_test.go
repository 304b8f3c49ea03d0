package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// dirEntries lists the names in dir, so that a test sees a temporary file
// left behind.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

func TestWriteFile(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, path string)
		perm  fs.FileMode
	}{
		{name: "new file", perm: 0o600},
		{name: "new file, wider mode than the umask allows", perm: 0o666},
		{name: "existing file: content and mode replaced", perm: 0o640, setup: func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte("old content that is longer"), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			if tt.setup != nil {
				tt.setup(t, path)
			}
			if err := WriteFile(path, []byte("new"), tt.perm); err != nil {
				t.Fatalf("WriteFile: %v", err)
			}
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("new", string(got)); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
			info, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm() != tt.perm {
				t.Errorf("mode %v, want %v", info.Mode().Perm(), tt.perm)
			}
			if diff := cmp.Diff([]string{"state.json"}, dirEntries(t, dir)); diff != "" {
				t.Errorf("directory (-want +got):\n%s", diff)
			}
		})
	}
}

func TestWriteFileReplacesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("target"), 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link")
	if err := os.Symlink(target, link); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	if err := WriteFile(link, []byte("new"), 0o600); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(link); err != nil || !info.Mode().IsRegular() {
		t.Errorf("the link was not replaced by a file: %v, %v", info, err)
	}
	if got, _ := os.ReadFile(target); string(got) != "target" {
		t.Errorf("the link's target changed to %q", got)
	}
}

func TestWriteFileRefuses(t *testing.T) {
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string
	}{
		{"a directory at the path", func(t *testing.T, dir string) string {
			path := filepath.Join(dir, "sub")
			if err := os.Mkdir(path, 0o700); err != nil {
				t.Fatal(err)
			}
			return path
		}},
		{"a missing directory", func(t *testing.T, dir string) string {
			return filepath.Join(dir, "missing", "state.json")
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := tt.setup(t, dir)
			before := dirEntries(t, dir)
			if err := WriteFile(path, []byte("x"), 0o600); err == nil {
				t.Fatal("WriteFile succeeded")
			}
			if diff := cmp.Diff(before, dirEntries(t, dir)); diff != "" {
				t.Errorf("the directory changed (-before +after):\n%s", diff)
			}
		})
	}
}

// TestWriteFileFaults makes each step after the write fail and checks what
// is left: before the rename the old content and no temporary file, after
// it the new content and an error.
func TestWriteFileFaults(t *testing.T) {
	errDisk := syscall.EIO
	isDir := func(f *os.File) bool {
		info, err := f.Stat()
		return err == nil && info.IsDir()
	}
	tests := []struct {
		name        string
		fsys        func(real fileSystem) fileSystem
		wantErr     bool
		wantContent string
	}{
		{"file fsync fails", func(real fileSystem) fileSystem {
			real.sync = func(f *os.File) error {
				if isDir(f) {
					return nil
				}
				return errDisk
			}
			return real
		}, true, "old"},
		{"rename fails", func(real fileSystem) fileSystem {
			real.rename = func(string, string) error { return errDisk }
			return real
		}, true, "old"},
		{"directory fsync fails", func(real fileSystem) fileSystem {
			real.sync = func(f *os.File) error {
				if isDir(f) {
					return errDisk
				}
				return f.Sync()
			}
			return real
		}, true, "new"},
		{"directory fsync unsupported", func(real fileSystem) fileSystem {
			real.sync = func(f *os.File) error {
				if isDir(f) {
					return syscall.EINVAL
				}
				return f.Sync()
			}
			return real
		}, false, "new"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "state.json")
			if err := os.WriteFile(path, []byte("old"), 0o600); err != nil {
				t.Fatal(err)
			}
			err := writeFile(tt.fsys(osFS()), path, []byte("new"), 0o600)
			if (err != nil) != tt.wantErr {
				t.Fatalf("writeFile error %v, want an error: %v", err, tt.wantErr)
			}
			if err != nil && !errors.Is(err, errDisk) {
				t.Errorf("the error %v does not wrap the cause", err)
			}
			if err != nil && !strings.Contains(err.Error(), path) {
				t.Errorf("the error %v does not name the path", err)
			}
			got, _ := os.ReadFile(path)
			if diff := cmp.Diff(tt.wantContent, string(got)); diff != "" {
				t.Errorf("content (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]string{"state.json"}, dirEntries(t, dir)); diff != "" {
				t.Errorf("directory (-want +got):\n%s", diff)
			}
		})
	}
}

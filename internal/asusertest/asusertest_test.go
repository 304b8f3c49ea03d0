package asusertest

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestNeeded(t *testing.T) {
	if got, want := Needed(), os.Geteuid() == 0; got != want {
		t.Errorf("Needed() = %v with euid %d, want %v", got, os.Geteuid(), want)
	}
}

// TestPublicDir checks that the directory is a fresh 0755 directory in the
// system's temporary directory, and that it is gone, with what the test put
// in it, once the test ends.
func TestPublicDir(t *testing.T) {
	var dir string
	t.Run("use", func(t *testing.T) {
		dir = PublicDir(t)
		info, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		if !info.IsDir() || info.Mode().Perm() != 0o755 {
			t.Errorf("%s: mode %v, want a directory with 0755", dir, info.Mode())
		}
		if filepath.Dir(dir) != filepath.Clean(os.TempDir()) {
			t.Errorf("%s is not in %s", dir, os.TempDir())
		}
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	})
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("%s after the test: %v, want it removed", dir, err)
	}
}

func TestPublicCopy(t *testing.T) {
	src := filepath.Join(t.TempDir(), "prog")
	content := []byte("#!/bin/sh\nexit 0\n")
	if err := os.WriteFile(src, content, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		mode os.FileMode
	}{
		{name: "executable by all", mode: 0o755},
		{name: "execute-only", mode: 0o711},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := PublicCopy(t, src, tt.mode)
			if filepath.Base(dst) != "prog" {
				t.Errorf("the copy is named %s, want prog", filepath.Base(dst))
			}
			dirInfo, err := os.Stat(filepath.Dir(dst))
			if err != nil {
				t.Fatal(err)
			}
			if dirInfo.Mode().Perm() != 0o755 {
				t.Errorf("the copy's directory has mode %v, want 0755", dirInfo.Mode().Perm())
			}
			info, err := os.Stat(dst)
			if err != nil {
				t.Fatal(err)
			}
			if info.Mode().Perm() != tt.mode {
				t.Errorf("the copy has mode %v, want %v", info.Mode().Perm(), tt.mode)
			}
			got, err := os.ReadFile(dst)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, content) {
				t.Errorf("the copy holds %q, want %q", got, content)
			}
		})
	}
}

func TestCopyFileErrors(t *testing.T) {
	dir := t.TempDir()
	existing := filepath.Join(dir, "existing")
	if err := os.WriteFile(existing, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		src, dst string
		want     string
	}{
		{name: "missing source", src: filepath.Join(dir, "missing"), dst: filepath.Join(dir, "new"), want: "missing"},
		{name: "existing destination", src: existing, dst: existing, want: "exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := copyFile(tt.src, tt.dst, 0o755)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("copyFile(%s, %s) = %v, want an error naming %q", tt.src, tt.dst, err, tt.want)
			}
		})
	}
}

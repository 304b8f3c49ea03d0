package tmpfstest

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestFillAndDrain(t *testing.T) {
	d := Mount(t, 256<<10)
	if d.Free() == 0 {
		t.Fatal("a fresh tmpfs has no free space")
	}
	d.Fill()
	err := os.WriteFile(filepath.Join(d.Dir, "f"), []byte("x"), 0o600)
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a write on the full disk: %v, want ENOSPC", err)
	}
	d.Drain()
	if err := os.WriteFile(filepath.Join(d.Dir, "f"), []byte("x"), 0o600); err != nil {
		t.Fatalf("a write after the drain: %v", err)
	}
}

func TestFillBut(t *testing.T) {
	d := Mount(t, 256<<10)
	page := int64(os.Getpagesize())
	d.FillBut(2*page + 1)
	if got := d.Free(); got != 2*page {
		t.Fatalf("free %d, want %d", got, 2*page)
	}
}

// TestTop keeps the disk full while another writer frees space on it: each
// Top takes back what was freed.
func TestTop(t *testing.T) {
	d := Mount(t, 256<<10)
	page := int64(os.Getpagesize())
	other := filepath.Join(d.Dir, "other")
	if err := os.WriteFile(other, make([]byte, 4*page), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := d.Top(); err != nil {
		t.Fatal(err)
	}
	if got := d.Free(); got != 0 {
		t.Fatalf("free %d after Top, want 0", got)
	}
	if err := os.Remove(other); err != nil {
		t.Fatal(err)
	}
	if got := d.Free(); got < 4*page {
		t.Fatalf("free %d after removing 4 pages, want at least %d", got, 4*page)
	}
	if err := d.Top(); err != nil {
		t.Fatal(err)
	}
	if got := d.Free(); got != 0 {
		t.Fatalf("free %d after the second Top, want 0", got)
	}
	if err := os.WriteFile(filepath.Join(d.Dir, "f"), []byte("x"), 0o600); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("a write on the topped-up disk: %v, want ENOSPC", err)
	}
}

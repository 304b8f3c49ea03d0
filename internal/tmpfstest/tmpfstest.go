// Package tmpfstest gives a test a real file system that fills up: a small
// tmpfs mounted on a fresh directory, a ballast file that takes all its
// free space (every write that needs a new block then fails with ENOSPC,
// as on a full disk), and the ballast's removal, which frees it again.
//
// Mounting needs root or CAP_SYS_ADMIN, as the tests have in CI; without
// it [Mount] skips the test, naming what is missing. It imports nothing
// but the standard library, so every package's tests may use it.
package tmpfstest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// BallastFile is the name of the file [Disk.Fill] writes in the disk's
// directory.
const BallastFile = "tmpfstest-ballast"

// Disk is a mounted tmpfs.
type Disk struct {
	// Dir is where it is mounted.
	Dir string
	t   testing.TB
}

// Mount mounts a tmpfs of size bytes (rounded up to whole pages by the
// kernel) on a fresh directory, and unmounts it when the test ends. It
// skips the test when the process may not mount.
func Mount(t testing.TB, size int64) *Disk {
	t.Helper()
	dir := t.TempDir()
	opts := fmt.Sprintf("size=%d,mode=0700", size)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_NOSUID|syscall.MS_NODEV, opts); err != nil {
		if errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EACCES) {
			t.Skipf("tmpfstest: mounting a tmpfs needs root or CAP_SYS_ADMIN: %v", err)
		}
		t.Fatalf("tmpfstest: mount -t tmpfs -o %s on %s: %v", opts, dir, err)
	}
	// Registered after t.TempDir's own cleanup, so it runs before it: the
	// directory is removed once the tmpfs is gone.
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("tmpfstest: unmount %s: %v", dir, err)
		}
	})
	return &Disk{Dir: dir, t: t}
}

// Fill writes the ballast file until the disk has no free block left.
func (d *Disk) Fill() {
	d.t.Helper()
	d.FillBut(0)
}

// FillBut writes the ballast file until the disk has only free bytes
// left (rounded down to whole pages), or none. It fails the test when a
// write fails with anything but ENOSPC.
func (d *Disk) FillBut(free int64) {
	d.t.Helper()
	f, err := os.OpenFile(filepath.Join(d.Dir, BallastFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		d.t.Fatalf("tmpfstest: creating the ballast: %v", err)
	}
	defer f.Close()
	page := int64(os.Getpagesize())
	free -= free % page
	// Large writes first, then page by page, so that not a page more is
	// left over than asked.
	for _, chunk := range []int64{1 << 20, page} {
		buf := make([]byte, chunk)
		for d.Free()-chunk >= free {
			if _, err := f.Write(buf); err != nil {
				if !errors.Is(err, syscall.ENOSPC) {
					d.t.Fatalf("tmpfstest: writing the ballast: %v", err)
				}
				break
			}
		}
	}
	if got := d.Free(); got != free {
		d.t.Fatalf("tmpfstest: the ballast left %d bytes free, want %d", got, free)
	}
}

// Top writes to the ballast until a write fails with ENOSPC, as Fill
// does, for a disk that others write to and free at the same time (a bot
// under load replaces its files, and each rename frees the old blocks):
// it does not require that nothing is left free afterwards, only that the
// disk was full at one moment, and it returns its errors instead of
// failing the test, so any goroutine may call it, as often as it likes,
// to keep the disk full.
func (d *Disk) Top() error {
	f, err := os.OpenFile(filepath.Join(d.Dir, BallastFile), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ENOSPC) {
			// Not even the ballast's inode fits: the disk is full.
			return nil
		}
		return fmt.Errorf("tmpfstest: opening the ballast: %w", err)
	}
	defer f.Close()
	for _, chunk := range []int{1 << 20, os.Getpagesize()} {
		buf := make([]byte, chunk)
		for {
			_, err := f.Write(buf)
			if errors.Is(err, syscall.ENOSPC) {
				break
			}
			if err != nil {
				return fmt.Errorf("tmpfstest: writing the ballast: %w", err)
			}
		}
	}
	return nil
}

// Drain removes the ballast: the disk has its space back.
func (d *Disk) Drain() {
	d.t.Helper()
	if err := os.Remove(filepath.Join(d.Dir, BallastFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		d.t.Fatalf("tmpfstest: removing the ballast: %v", err)
	}
}

// Free returns the bytes free on the disk.
func (d *Disk) Free() int64 {
	d.t.Helper()
	var st syscall.Statfs_t
	if err := syscall.Statfs(d.Dir, &st); err != nil {
		d.t.Fatalf("tmpfstest: statfs %s: %v", d.Dir, err)
	}
	return int64(st.Bavail) * st.Bsize
}

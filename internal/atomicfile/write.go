package atomicfile

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
)

// WriteFile replaces the file at path with data, and perm as its mode: it
// writes a temporary file in path's directory, sets its mode, fsyncs it,
// renames it over path and fsyncs the directory, so that the rename itself
// survives a crash. A reader sees the old content or the new, never a mix.
// An existing path that is not a regular file (a directory, a device) is an
// error and is left alone; a symbolic link at path is replaced, not
// followed. The directory must exist.
//
// An error after the rename (only the directory's fsync can fail there)
// means the new content is in place but may not survive a crash.
func WriteFile(path string, data []byte, perm fs.FileMode) error {
	return writeFile(osFS(), path, data, perm)
}

// fileSystem is what WriteFile does to the disk besides writing bytes: the
// seam through which tests make an fsync or the rename fail.
type fileSystem struct {
	sync   func(f *os.File) error
	rename func(oldpath, newpath string) error
}

// osFS is the real file system.
func osFS() fileSystem {
	return fileSystem{sync: (*os.File).Sync, rename: os.Rename}
}

func writeFile(fsys fileSystem, path string, data []byte, perm fs.FileMode) error {
	if info, err := os.Lstat(path); err == nil && !info.Mode().IsRegular() && info.Mode()&fs.ModeSymlink == 0 {
		return fmt.Errorf("atomicfile: %s is not a regular file (%v)", path, info.Mode().Type())
	}
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("atomicfile: %w", err)
	}
	tmpName := tmp.Name()
	renamed := false
	defer func() {
		if !renamed {
			os.Remove(tmpName)
		}
	}()
	if err := writeAndSync(fsys, tmp, data, perm); err != nil {
		tmp.Close()
		return fmt.Errorf("atomicfile: writing %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("atomicfile: writing %s: %w", path, err)
	}
	if err := fsys.rename(tmpName, path); err != nil {
		return fmt.Errorf("atomicfile: replacing %s: %w", path, err)
	}
	renamed = true
	if err := syncDir(fsys, dir); err != nil {
		return fmt.Errorf("atomicfile: %s is replaced, but its directory could not be synced: %w", path, err)
	}
	return nil
}

// writeAndSync writes data to f, sets its mode and fsyncs it.
func writeAndSync(fsys fileSystem, f *os.File, data []byte, perm fs.FileMode) error {
	if _, err := f.Write(data); err != nil {
		return err
	}
	// The temporary file starts as 0600 whatever the umask; perm is what
	// the caller asked for, so it is set as given.
	if err := f.Chmod(perm); err != nil {
		return err
	}
	return fsys.sync(f)
}

// syncDir fsyncs the directory dir, so that a rename in it is durable. A
// file system that cannot sync directories says so with EINVAL or ENOTSUP;
// there is nothing more to do on it. Windows cannot open a directory for
// syncing, and its renames need no such step.
func syncDir(fsys fileSystem, dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := fsys.sync(d); err != nil && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ENOTSUP) {
		return err
	}
	return nil
}

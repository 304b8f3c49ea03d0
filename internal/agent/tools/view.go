package tools

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// WithView confines the file tools (read, write, edit) to the agent
// sandbox's view: they open every path beneath a directory the view
// grants, with the kernel resolving each component there, and never a
// process's /proc entry (see [sandbox.View.OpenFile]). nil leaves them
// unconfined (AGENT_SANDBOX=off). The bash tool's sandbox comes from the
// spawn policy, which starts it through the launcher.
func WithView(v *sandbox.View) BashOption {
	return func(c *bashConfig) { c.view = v }
}

// fileAccess is how the file tools reach files: as the bot's user when
// view is nil, through the sandbox view otherwise.
type fileAccess struct {
	view *sandbox.View
}

// errNotRegular is the error of a path that is neither a regular file nor
// a directory (a FIFO, a device, a socket).
var errNotRegular = errors.New("not a regular file; the file tools read only files")

// open opens path for reading: a regular file or a directory. The open
// does not block (O_NONBLOCK): a FIFO the agent made (mkfifo) would wait
// for a writer, which no agent process is left to be once its call has
// ended, and hold the bot's goroutine, and the chat's turn, in the kernel
// for ever; it, a device or a socket is refused instead. A regular file
// reads as it would without the flag.
func (a fileAccess) open(path string) (*os.File, error) {
	var f *os.File
	var err error
	if a.view == nil {
		f, err = os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	} else {
		f, err = a.view.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	}
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if !info.Mode().IsRegular() && !info.IsDir() {
		f.Close()
		return nil, &fs.PathError{Op: "open", Path: path, Err: errNotRegular}
	}
	return f, nil
}

// errTooLarge is the error of a file longer than what a tool reads whole.
var errTooLarge = errors.New("too large to read whole")

// readFile opens path for reading and returns its information and its
// content, at most limit bytes: a longer file is errTooLarge, before it is
// read when its size says so (a sparse file of a terabyte costs the agent
// one truncate, and would cost the bot its memory). A directory is not
// read.
func (a fileAccess) readFile(path string, limit int64) (fs.FileInfo, []byte, error) {
	f, err := a.open(path)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || info.IsDir() {
		return info, nil, err
	}
	if info.Size() > limit {
		return info, nil, &fs.PathError{Op: "read", Path: path, Err: errTooLarge}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err == nil && int64(len(data)) > limit {
		return info, nil, &fs.PathError{Op: "read", Path: path, Err: errTooLarge}
	}
	return info, data, err
}

// mkdirAll makes dir and its missing parents.
func (a fileAccess) mkdirAll(dir string) error {
	if a.view == nil {
		return os.MkdirAll(dir, 0o755)
	}
	d, err := a.view.OpenDir(dir, true)
	if err != nil {
		return err
	}
	return d.Close()
}

// writeAtomic replaces path's content with data, as writeFileAtomic does.
// Through the view, a symbolic link is followed only as far as the view's
// writable trees reach, and the temporary file is made and renamed
// relative to the directory the view opened, so nothing in between can
// redirect the write.
func (a fileAccess) writeAtomic(path string, data []byte) error {
	if a.view == nil {
		return writeFileAtomic(path, data)
	}
	real, err := a.view.Resolve(path, true)
	if err != nil {
		return err
	}
	dir, err := a.view.OpenDir(filepath.Dir(real), false)
	if err != nil {
		return err
	}
	defer dir.Close()
	dirfd, base := int(dir.Fd()), filepath.Base(real)
	mode := uint32(0o644)
	var st unix.Stat_t
	switch err := unix.Fstatat(dirfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); {
	case err == nil && st.Mode&unix.S_IFMT == unix.S_IFDIR:
		return fmt.Errorf("%s: %w", path, syscall.EISDIR)
	case err == nil:
		mode = st.Mode & 0o7777
	case !errors.Is(err, unix.ENOENT):
		return err
	}
	suffix := make([]byte, 6)
	if _, err := rand.Read(suffix); err != nil {
		return err
	}
	tmp := "." + base + ".tmp-" + hex.EncodeToString(suffix)
	fd, err := unix.Openat(dirfd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return &fs.PathError{Op: "create", Path: filepath.Join(filepath.Dir(real), tmp), Err: err}
	}
	f := os.NewFile(uintptr(fd), tmp)
	err = writeSynced(f, data, os.FileMode(mode))
	if err == nil {
		err = unix.Renameat(dirfd, tmp, dirfd, base)
	}
	if err != nil {
		_ = unix.Unlinkat(dirfd, tmp, 0)
	}
	return err
}

// writeSynced writes data to f, sets its mode, syncs and closes it.
func writeSynced(f *os.File, data []byte, mode os.FileMode) error {
	_, err := f.Write(data)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

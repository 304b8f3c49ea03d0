//go:build linux

package sandbox

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// ErrOutsideView is the error, wrapped in an *fs.PathError, of a path the
// view does not grant (or grants only for reading, when writing).
var ErrOutsideView = errors.New("outside the agent sandbox's view")

// ErrProcessEntry is the error of a /proc/<pid>/... path: the in-process
// tools run as the bot, which may read other processes' entries (an MCP
// server's environment) and its own.
var ErrProcessEntry = errors.New("a process's /proc entry, which the agent may not read")

// maxHops bounds how many symbolic links leading from one granted tree
// into another one resolution follows.
const maxHops = 8

// resolveFlags confine every open: beneath the granted directory, and no
// /proc magic link (/proc/<pid>/fd/..., /proc/<pid>/root) ever followed.
const resolveFlags = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS

// OpenFile opens path (absolute) as os.OpenFile would, but only as the
// view allows: for reading beneath a granted directory, for writing (any
// of O_WRONLY, O_RDWR, O_CREAT, O_TRUNC, O_APPEND) beneath a writable one,
// and never a /proc/<pid>/... entry. Every component is resolved by the
// kernel beneath the granted directory (openat2 with RESOLVE_BENEATH and
// RESOLVE_NO_MAGICLINKS), so a symbolic link swapped in between a check
// and the open cannot lead outside it. A symbolic link that leads into
// another granted tree is followed there, under that tree's own access.
// Errors are *fs.PathError wrapping ErrOutsideView, ErrProcessEntry or the
// system's error.
func (v View) OpenFile(path string, flag int, perm os.FileMode) (*os.File, error) {
	write := flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0
	var mode uint32
	if flag&os.O_CREATE != 0 {
		mode = uint32(perm.Perm())
	}
	fd, name, err := v.openat2(path, flag|unix.O_CLOEXEC, mode, write)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(fd), name), nil
}

// Resolve returns where path really leads, with every symbolic link
// resolved, when the view grants it (for writing when write is set); a
// path that does not exist yet resolves through its parent directory. It
// is the view check a tool that names a file to the outside (send_file)
// makes before it opens it with OpenFile.
func (v View) Resolve(path string, write bool) (string, error) {
	fd, name, err := v.openat2(path, unix.O_PATH|unix.O_CLOEXEC, 0, write)
	if errors.Is(err, unix.ENOENT) {
		dfd, dir, derr := v.openat2(filepath.Dir(filepath.Clean(path)), unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0, write)
		if derr != nil {
			return "", &fs.PathError{Op: "resolve", Path: path, Err: derr}
		}
		unix.Close(dfd)
		return filepath.Join(dir, filepath.Base(path)), nil
	}
	if err != nil {
		return "", &fs.PathError{Op: "resolve", Path: path, Err: err}
	}
	unix.Close(fd)
	return name, nil
}

// OpenDir opens the directory path for creating and renaming files in it,
// beneath a writable directory of the view, making it and its missing
// parents (mode 0755) first when create is set.
func (v View) OpenDir(path string, create bool) (*os.File, error) {
	if !create {
		fd, name, err := v.openat2(path, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0, true)
		if err != nil {
			return nil, &fs.PathError{Op: "open", Path: path, Err: err}
		}
		return os.NewFile(uintptr(fd), name), nil
	}
	clean := filepath.Clean(path)
	root, ok := v.root(clean, true)
	if !ok {
		return nil, &fs.PathError{Op: "mkdir", Path: path, Err: ErrOutsideView}
	}
	dirfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "mkdir", Path: path, Err: err}
	}
	rel := strings.TrimPrefix(strings.TrimPrefix(clean, root), "/")
	for _, part := range strings.Split(rel, "/") {
		if part == "" {
			continue
		}
		if err := unix.Mkdirat(dirfd, part, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
			unix.Close(dirfd)
			return nil, &fs.PathError{Op: "mkdir", Path: path, Err: err}
		}
		next, err := unix.Openat2(dirfd, part, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: resolveFlags})
		unix.Close(dirfd)
		if err != nil {
			return nil, &fs.PathError{Op: "mkdir", Path: path, Err: err}
		}
		dirfd = next
	}
	return os.NewFile(uintptr(dirfd), clean), nil
}

// openat2 opens path beneath the granted directory it lies in, following
// a symbolic link into another granted tree at most maxHops times. It
// returns the descriptor and the path it really opened.
func (v View) openat2(path string, flags int, mode uint32, write bool) (int, string, error) {
	if !filepath.IsAbs(path) {
		return -1, "", fmt.Errorf("%q is not an absolute path: %w", path, ErrOutsideView)
	}
	p := filepath.Clean(path)
	for range maxHops {
		if isProcessEntry(p) {
			return -1, "", ErrProcessEntry
		}
		if v.hides(p) {
			return -1, "", ErrOutsideView
		}
		root, ok := v.root(p, write)
		if !ok {
			return -1, "", ErrOutsideView
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p, root), "/")
		if rel == "" {
			rel = "."
		}
		rootfd, err := unix.Open(root, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return -1, "", err
		}
		fd, err := unix.Openat2(rootfd, rel, &unix.OpenHow{Flags: uint64(flags), Mode: uint64(mode), Resolve: resolveFlags})
		if errors.Is(err, unix.EXDEV) {
			// A symbolic link leads out of root: find out where, and open
			// it again beneath the tree that holds the target, if any.
			next, rerr := linkTarget(rootfd, rel)
			unix.Close(rootfd)
			if rerr != nil || next == p {
				return -1, "", ErrOutsideView
			}
			p = next
			continue
		}
		unix.Close(rootfd)
		if err != nil {
			return -1, "", err
		}
		real, err := fdPath(fd)
		if err != nil {
			unix.Close(fd)
			return -1, "", err
		}
		if isProcessEntry(real) {
			unix.Close(fd)
			return -1, "", ErrProcessEntry
		}
		if v.hides(real) {
			unix.Close(fd)
			return -1, "", ErrOutsideView
		}
		return fd, real, nil
	}
	return -1, "", fmt.Errorf("more than %d symbolic links between granted trees: %w", maxHops, ErrOutsideView)
}

// linkTarget returns where rel (beneath rootfd) leads once every symbolic
// link is followed, magic links excepted. The answer is only a hint: the
// caller opens it again, confined, so a swap in between gains nothing.
func linkTarget(rootfd int, rel string) (string, error) {
	fd, err := unix.Openat2(rootfd, rel, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return "", err
	}
	defer unix.Close(fd)
	return fdPath(fd)
}

// fdPath returns the path the kernel has for the open descriptor fd.
func fdPath(fd int) (string, error) {
	buf := make([]byte, unix.PathMax)
	n, err := unix.Readlink("/proc/self/fd/"+strconv.Itoa(fd), buf)
	if err != nil {
		return "", err
	}
	return string(buf[:n]), nil
}

// root returns the granted directory path lies in that gives the access
// asked for (the deepest one, so a writable addition inside a read-only
// tree counts), and whether there is one.
func (v View) root(path string, write bool) (string, bool) {
	best := ""
	for _, g := range v.all() {
		if g.path == "" || (write && !g.write) {
			continue
		}
		r := filepath.Clean(g.path)
		if within(path, []string{r}) && len(r) > len(best) {
			best = r
		}
	}
	return best, best != ""
}

// isProcessEntry reports whether path is /proc/<pid>, /proc/self,
// /proc/thread-self or anything beneath them.
func isProcessEntry(path string) bool {
	rest, ok := strings.CutPrefix(path, "/proc/")
	if !ok {
		return false
	}
	first, _, _ := strings.Cut(rest, "/")
	if first == "self" || first == "thread-self" {
		return true
	}
	_, err := strconv.Atoi(first)
	return err == nil
}

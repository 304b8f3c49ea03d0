package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"

	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// The bot changes owners and modes as root at each start, in trees the
// agent writes (the workspace, its temporary directory): a process of the
// agent's left from an earlier run could swap a directory for a symbolic
// link to /etc between a check and a chown or chmod by path. So every
// change here goes through a descriptor opened relative to its parent's,
// with O_NOFOLLOW, and the mode through that descriptor's /proc/self/fd
// link, which names the inode opened and is never resolved again.

// giveTree gives every file under root to ids (to ids.GID alone when uid
// is -1), and makes the group's permissions the owner's, directories
// setgid, so that what is created in them keeps the agent's group: the
// bot's file tools (the agent's group) and the agent's processes (its
// uid) share the tree that way. Symbolic links get the owner only, a file
// with more than one link nothing; only what differs is changed.
func giveTree(root string, uid int, ids sandbox.IDs) error {
	return walkNoFollow(root, "", func(fd int, st *unix.Stat_t) error {
		if st.Mode&unix.S_IFMT == unix.S_IFREG && st.Nlink > 1 {
			// A hard link may be to a file anywhere on the file system
			// (where fs.protected_hardlinks is off): left as it is.
			return nil
		}
		if (uid >= 0 && int(st.Uid) != uid) || int(st.Gid) != ids.GID {
			if err := unix.Fchownat(fd, "", uid, ids.GID, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return err
			}
			// A chown clears the set-user-id and set-group-id bits.
			if err := unix.Fstat(fd, st); err != nil {
				return err
			}
		}
		kind := st.Mode & unix.S_IFMT
		if kind != unix.S_IFDIR && kind != unix.S_IFREG {
			return nil
		}
		mode := st.Mode & 0o7777
		want := mode&^0o7070 | (mode&0o700)>>3
		if kind == unix.S_IFDIR {
			want |= mode&unix.S_ISVTX | unix.S_ISGID
		}
		if want == mode {
			return nil
		}
		return chmodFD(fd, want)
	})
}

// ownTree gives every file under root but the tree skip names to ids: the
// bot's state, which a run of an older version (or as root) may have left
// with other owners.
func ownTree(root, skip string, ids sandbox.IDs) error {
	return walkNoFollow(root, skip, func(fd int, st *unix.Stat_t) error {
		if int(st.Uid) == ids.UID && int(st.Gid) == ids.GID {
			return nil
		}
		return unix.Fchownat(fd, "", ids.UID, ids.GID, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW)
	})
}

// setOwnerNoFollow sets the directory dir's owner (uid -1 keeps it), group
// and mode, refusing a symbolic link.
func setOwnerNoFollow(dir string, uid, gid int, mode uint32) error {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_NOFOLLOW|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", dir, err)
	}
	defer unix.Close(fd)
	if err := unix.Fchownat(fd, "", uid, gid, unix.AT_EMPTY_PATH|unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return fmt.Errorf("chown %s: %w", dir, err)
	}
	if err := chmodFD(fd, mode); err != nil {
		return fmt.Errorf("chmod %s: %w", dir, err)
	}
	return nil
}

// chmodFD sets the mode of the file fd is open on (an O_PATH descriptor
// too), through its /proc/self/fd link.
func chmodFD(fd int, mode uint32) error {
	return unix.Chmod("/proc/self/fd/"+strconv.Itoa(fd), mode)
}

// walkNoFollow calls each with a descriptor (O_PATH, not following a
// link) and the status of root and of every file below it, skipping the
// tree skip names; a directory is entered through a descriptor opened
// relative to its parent's, never by path.
func walkNoFollow(root, skip string, each func(fd int, st *unix.Stat_t) error) error {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return fmt.Errorf("open %s: %w", root, err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if err := each(fd, &st); err != nil {
		return fmt.Errorf("%s: %w", root, err)
	}
	return walkDir(fd, root, filepath.Clean(skip), each)
}

// walkDir calls each for every entry of the directory dirfd (path names it
// in errors), and walks the directories among them.
func walkDir(dirfd int, path, skip string, each func(fd int, st *unix.Stat_t) error) error {
	dup, err := unix.Dup(dirfd)
	if err != nil {
		return err
	}
	dir := os.NewFile(uintptr(dup), path)
	names, err := dir.Readdirnames(-1)
	dir.Close()
	if err != nil {
		return fmt.Errorf("list %s: %w", path, err)
	}
	for _, name := range names {
		child := filepath.Join(path, name)
		if child == skip {
			continue
		}
		fd, err := unix.Openat(dirfd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			continue
		}
		if err != nil {
			return fmt.Errorf("open %s: %w", child, err)
		}
		var st unix.Stat_t
		err = unix.Fstat(fd, &st)
		if err == nil {
			err = each(fd, &st)
		}
		unix.Close(fd)
		if err != nil {
			return fmt.Errorf("%s: %w", child, err)
		}
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			continue
		}
		sub, err := unix.Openat(dirfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			continue // swapped since: not walked into
		}
		if err != nil {
			return fmt.Errorf("open %s: %w", child, err)
		}
		err = walkDir(sub, child, skip, each)
		unix.Close(sub)
		if err != nil {
			return err
		}
	}
	return nil
}

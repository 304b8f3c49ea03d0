//go:build unix

package mcp

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// maxSymlinks bounds how many symbolic links checkTrust follows, as the
// kernel does (ELOOP).
const maxSymlinks = 40

// checkTrust refuses a configuration file that the current process's user
// could modify or replace: the file, or any directory a lookup of its path
// passes through (symbolic links followed, the directories holding the
// links included). Whatever that user can write, the agent (which runs as
// that user) can write. A directory is safe when the user neither owns it
// nor may write to it (access(2)); a writable sticky directory such as
// /tmp is safe for an entry neither it nor the directory belongs to the
// user. As root, access(2) allows everything, so the check is skipped with
// a warning. A missing file is an error wrapping fs.ErrNotExist.
func checkTrust(path string) ([]string, error) {
	if os.Geteuid() == 0 {
		return []string{fmt.Sprintf("mcp: %s: the bot runs as root, so the check that its own user cannot modify the MCP configuration is skipped; run the bot as an unprivileged user", path)}, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("resolving the path: %w", err)
	}
	euid := uint32(os.Geteuid())
	pending := strings.Split(abs, "/")
	dir := "/"
	links := 0
	var final string
	for len(pending) > 0 {
		name := pending[0]
		pending = pending[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			dir = filepath.Dir(dir)
			continue
		}
		entry := filepath.Join(dir, name)
		var st unix.Stat_t
		if err := unix.Lstat(entry, &st); err != nil {
			return nil, &fs.PathError{Op: "lstat", Path: entry, Err: err}
		}
		if reason, err := replaceable(dir, entry, st.Uid, euid); err != nil {
			return nil, err
		} else if reason != "" {
			return nil, untrusted(reason, euid)
		}
		switch uint32(st.Mode) & unix.S_IFMT {
		case unix.S_IFLNK:
			links++
			if links > maxSymlinks {
				return nil, &fs.PathError{Op: "resolve", Path: abs, Err: unix.ELOOP}
			}
			target, err := os.Readlink(entry)
			if err != nil {
				return nil, fmt.Errorf("reading the link: %w", err)
			}
			if filepath.IsAbs(target) {
				dir = "/"
			}
			pending = append(strings.Split(target, "/"), pending...)
			continue
		case unix.S_IFDIR:
			dir = entry
			final = ""
		default:
			if len(pending) > 0 && strings.Join(pending, "") != "" {
				return nil, &fs.PathError{Op: "resolve", Path: entry, Err: unix.ENOTDIR}
			}
			final = entry
		}
	}
	if final == "" {
		return nil, fmt.Errorf("%s is not a file", abs)
	}
	var st unix.Stat_t
	if err := unix.Stat(final, &st); err != nil {
		return nil, &fs.PathError{Op: "stat", Path: final, Err: err}
	}
	switch {
	case st.Uid == euid:
		return nil, untrusted(fmt.Sprintf("the file %s belongs to the bot's user", final), euid)
	case unix.Access(final, unix.W_OK) == nil:
		return nil, untrusted(fmt.Sprintf("the file %s is writable by the bot's user", final), euid)
	}
	return nil, nil
}

// replaceable says why the user euid could replace entry (owned by
// entryUID) in dir, or returns "" when it could not.
func replaceable(dir, entry string, entryUID, euid uint32) (string, error) {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return "", &fs.PathError{Op: "stat", Path: dir, Err: err}
	}
	if st.Uid == euid {
		return fmt.Sprintf("the directory %s belongs to the bot's user", dir), nil
	}
	err := unix.Access(dir, unix.W_OK)
	switch {
	case err != nil && !errors.Is(err, unix.EACCES) && !errors.Is(err, unix.EROFS) && !errors.Is(err, unix.EPERM):
		return "", &fs.PathError{Op: "access", Path: dir, Err: err}
	case err != nil:
		return "", nil
	case uint32(st.Mode)&unix.S_ISVTX != 0 && entryUID != euid:
		// A sticky directory: only an entry's owner (or the directory's)
		// may rename or remove it.
		return "", nil
	}
	return fmt.Sprintf("the directory %s is writable by the bot's user, so %s can be replaced", dir, entry), nil
}

// untrusted is the error for a configuration file the bot's user (euid)
// could change, with how to fix it.
func untrusted(reason string, euid uint32) error {
	return fmt.Errorf("%w: the bot's own user (uid %d) can modify it: %s; "+
		"the agent runs as that user and could rewrite it to hand itself the host's environment. "+
		"Put the file in a directory owned by another user (root) that uid %d cannot write, "+
		"make the file belong to that user with mode 0644 (for example chown root:root and chmod 0644), "+
		"or put the JSON itself in MCP_CONFIG", ErrUntrusted, euid, reason, euid)
}

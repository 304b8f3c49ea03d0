//go:build unix

package asusertest

import (
	"errors"
	"os"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Alive reports whether pid is a live process. A zombie counts as dead:
// the tests that ask want to know whether a process still runs, and an
// orphan nobody has reaped yet does not. Where /proc/<pid>/stat exists but
// cannot be read, a signal 0 decides.
func Alive(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) {
		return false
	}
	if err != nil {
		return unix.Kill(pid, 0) == nil
	}
	// The fields after the command name, which is in parentheses and may
	// hold anything: the state comes first.
	s := string(data)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	return len(f) > 0 && f[0] != "Z"
}

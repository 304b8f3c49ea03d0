//go:build !linux

package sandbox

import (
	"errors"
	"io/fs"
	"os"
)

// ErrOutsideView is the error of a path the view does not grant.
var ErrOutsideView = errors.New("outside the agent sandbox's view")

// ErrProcessEntry is the error of a /proc/<pid>/... path.
var ErrProcessEntry = errors.New("a process's /proc entry, which the agent may not read")

// Resolve refuses every path outside Linux.
func (v View) Resolve(path string, _ bool) (string, error) {
	return "", &fs.PathError{Op: "resolve", Path: path, Err: errUnsupported}
}

// OpenDir refuses every path outside Linux.
func (v View) OpenDir(path string, _ bool) (*os.File, error) {
	return nil, &fs.PathError{Op: "open", Path: path, Err: errUnsupported}
}

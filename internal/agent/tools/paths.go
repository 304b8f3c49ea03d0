package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/sandbox"
)

// resolvePath turns the model's path into an absolute one: an absolute path
// is cleaned, a relative one joined to the workspace. It is not a sandbox:
// ".." and absolute paths lead anywhere the bot's user can go.
func resolvePath(tc *agent.ToolContext, p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return "", errors.New("path must not be empty")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("path must not contain a NUL byte")
	}
	if filepath.IsAbs(p) {
		return filepath.Clean(p), nil
	}
	ws := ""
	if tc != nil {
		ws = tc.Workspace
	}
	if ws == "" {
		return "", fmt.Errorf("relative path %q but the session has no workspace", p)
	}
	return filepath.Join(ws, p), nil
}

// describeFileError words a file-system error for the model: missing
// files, folders where a file was expected and permission problems get a
// plain sentence naming path; anything else keeps the error's text.
func describeFileError(path string, err error) string {
	switch {
	case errors.Is(err, sandbox.ErrOutsideView):
		return fmt.Sprintf("Outside the sandbox: %s (the file tools reach the workspace, the temporary directory and the system directories, read-only)", path)
	case errors.Is(err, sandbox.ErrProcessEntry):
		return fmt.Sprintf("Refused: %s is a process's /proc entry, which the file tools never read", path)
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Sprintf("File not found: %s", path)
	case errors.Is(err, fs.ErrPermission):
		return fmt.Sprintf("Permission denied: %s", path)
	case errors.Is(err, syscall.EISDIR):
		return fmt.Sprintf("%s is a directory, not a file", path)
	case errors.Is(err, syscall.ENOTDIR):
		return fmt.Sprintf("A parent of %s is not a directory", path)
	case errors.Is(err, errNotRegular):
		return fmt.Sprintf("%s is not a regular file (a FIFO, a device or a socket); the file tools read only files", path)
	}
	return fmt.Sprintf("%s: %v", path, err)
}

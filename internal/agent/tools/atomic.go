package tools

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"github.com/volcanic/telegram-agent/internal/atomicfile"
)

// writeFileAtomic replaces path's content with data through
// atomicfile.WriteFile, so a reader never sees half a file. An existing
// file keeps its permission bits; a new one gets 0644. A symbolic link is
// followed, so its target is replaced.
func writeFileAtomic(path string, data []byte) error {
	if target, err := filepath.EvalSymlinks(path); err == nil {
		path = target
	}
	mode := fs.FileMode(0o644)
	info, err := os.Stat(path)
	switch {
	case err == nil && info.IsDir():
		return fmt.Errorf("%s: %w", path, syscall.EISDIR)
	case err == nil:
		mode = info.Mode().Perm()
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return atomicfile.WriteFile(path, data, mode)
}

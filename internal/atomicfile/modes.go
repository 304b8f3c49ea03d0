package atomicfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"
)

// RestoreModes gives the calling user back its own access to the state
// tree dir: every directory beneath it (dir included) that the user owns
// and cannot read, write and search, and every regular file it owns and
// cannot read and write, gets those owner bits back. A process of the same
// user (an agent's) can take them away with chmod and lock the bot out of
// its own state; the owner may always give them back. Nothing else
// changes: no group or other bit, no file of another user, no path under
// skip (a workspace kept inside the tree), and no symbolic link is
// followed. It returns the paths it changed, and the problems it met
// joined.
func RestoreModes(dir string, skip ...string) ([]string, error) {
	uid := os.Geteuid()
	var changed []string
	var errs []error
	walk := func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if path != dir || !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
			return nil
		}
		if slices.Contains(skip, path) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		need := fs.FileMode(0o600)
		switch {
		case d.IsDir():
			need = 0o700
		case !d.Type().IsRegular():
			return nil
		}
		info, err := d.Info()
		if err != nil {
			errs = append(errs, err)
			return nil
		}
		st, ok := info.Sys().(*syscall.Stat_t)
		if !ok || int(st.Uid) != uid || info.Mode().Perm()&need == need {
			return nil
		}
		if err := os.Chmod(path, info.Mode().Perm()|need); err != nil {
			errs = append(errs, err)
			return nil
		}
		changed = append(changed, path)
		return nil
	}
	// WalkDir reads a directory after it has been passed to walk, so a
	// directory whose modes walk gives back is read with them.
	if err := filepath.WalkDir(dir, walk); err != nil {
		errs = append(errs, err)
	}
	return changed, errors.Join(errs...)
}

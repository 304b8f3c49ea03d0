package tools

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// Spill files are named spillPrefix + random + spillSuffix.
const (
	spillPrefix = "bash-"
	spillSuffix = ".log"
)

// openSpill creates a new file for a full output in dir, after removing the
// saved outputs there that are older than the maximum age (at now) and then
// the oldest, so that at most the maximum number remain with the new one.
// Removal is best effort: a file that cannot be removed stays.
//
// Through the sandbox's view (WithView), dir is made and the file created
// beneath the workspace as the agent's own writes are: the agent may have
// made dir a link to a place it may not write, and the bot writes the file
// as itself.
func (b *bashTool) openSpill(dir string, now time.Time) (*os.File, error) {
	v := b.cfg.view
	if v == nil {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		pruneSpills(dir, now.Add(-b.cfg.spillMaxAge), b.cfg.spillMaxFiles-1)
		return os.CreateTemp(dir, spillPrefix+"*"+spillSuffix)
	}
	d, err := v.OpenDir(dir, true)
	if err != nil {
		return nil, err
	}
	d.Close()
	pruneSpills(dir, now.Add(-b.cfg.spillMaxAge), b.cfg.spillMaxFiles-1)
	for range 100 {
		suffix := make([]byte, 8)
		if _, err := rand.Read(suffix); err != nil {
			return nil, err
		}
		f, err := v.OpenFile(filepath.Join(dir, spillPrefix+hex.EncodeToString(suffix)+spillSuffix), os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if !errors.Is(err, fs.ErrExist) {
			return f, err
		}
	}
	return nil, &fs.PathError{Op: "createtemp", Path: dir, Err: fs.ErrExist}
}

// pruneSpills removes the spill files of dir modified before cutoff, then
// the oldest of the rest until at most keep remain. Other files are left
// alone.
func pruneSpills(dir string, cutoff time.Time, keep int) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	type spillFile struct {
		path string
		mod  time.Time
	}
	var kept []spillFile
	for _, e := range entries {
		name := e.Name()
		if !e.Type().IsRegular() || !strings.HasPrefix(name, spillPrefix) || !strings.HasSuffix(name, spillSuffix) {
			continue
		}
		info, err := e.Info()
		if err != nil {
			continue
		}
		path := filepath.Join(dir, name)
		if info.ModTime().Before(cutoff) {
			if os.Remove(path) == nil {
				continue
			}
		}
		kept = append(kept, spillFile{path: path, mod: info.ModTime()})
	}
	if len(kept) <= keep {
		return
	}
	sort.Slice(kept, func(i, j int) bool { return kept[i].mod.Before(kept[j].mod) })
	for _, f := range kept[:len(kept)-max(keep, 0)] {
		_ = os.Remove(f.path)
	}
}

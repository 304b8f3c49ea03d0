package chat

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// markerAtError is a log handler that, when the episode's Error line is
// handled, records whether the healthcheck's marker was there already.
type markerAtError struct {
	dir   string
	found []bool
}

func (m *markerAtError) Enabled(context.Context, slog.Level) bool { return true }

func (m *markerAtError) Handle(_ context.Context, r slog.Record) error {
	if r.Level == slog.LevelError {
		_, err := os.Stat(filepath.Join(m.dir, UnwritableFile))
		m.found = append(m.found, err == nil)
	}
	return nil
}

func (m *markerAtError) WithAttrs([]slog.Attr) slog.Handler { return m }
func (m *markerAtError) WithGroup(string) slog.Handler      { return m }

// The Error line that begins an episode comes after the healthcheck's
// marker: whoever reads the line finds the marker (the full-disk tests
// check it the moment they see the line).
func TestStorageEpisodeMarkedBeforeItsLine(t *testing.T) {
	dir := t.TempDir()
	h := &markerAtError{dir: dir}
	s := newStorageHealth(dir, slog.New(h))
	s.failed(SettingsFile, errors.Join(errors.New("write"), syscall.ENOSPC))
	if len(h.found) != 1 || !h.found[0] {
		t.Fatalf("marker present at the episode's Error lines: %v, want [true]", h.found)
	}
}

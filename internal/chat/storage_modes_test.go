package chat

import (
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestStorageRestoresModes: a write of the agent dir refused for
// permissions (an agent process of the bot's user ran chmod 0 on it and
// on a transcript) gives the bot's user its access back, at once, and
// the episode's error names permissions, not free space; a full disk
// names free space and changes no mode.
func TestStorageRestoresModes(t *testing.T) {
	dir := t.TempDir()
	transcript := filepath.Join(dir, "chat.jsonl")
	if err := os.WriteFile(transcript, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{transcript, dir} {
		if err := os.Chmod(p, 0); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) })
	rec := newLogRecorder()
	s := newStorageHealth(dir, rec.logger())
	s.failed("chat.jsonl", &fs.PathError{Op: "open", Path: transcript, Err: syscall.EACCES})
	for p, want := range map[string]fs.FileMode{dir: 0o700, transcript: 0o600} {
		if info, err := os.Stat(p); err != nil || info.Mode().Perm() != want {
			t.Errorf("%s after the refused write: %v, %v; want mode %v", filepath.Base(p), info.Mode().Perm(), err, want)
		}
	}
	rec.wait(t, "the restore's warning", isLog(slog.LevelWarn, "permissions had been taken"))
	began := rec.wait(t, "the episode's error", isLog(slog.LevelError, "the agent dir cannot be written"))
	if cause := began.Attrs["cause"]; !strings.Contains(cause, "permission") || strings.Contains(cause, "space") {
		t.Errorf("the episode's cause is %q, want permissions named, not space", cause)
	}

	full := t.TempDir()
	rec = newLogRecorder()
	newStorageHealth(full, rec.logger()).failed("chat.jsonl", errors.Join(errors.New("write"), syscall.ENOSPC))
	began = rec.wait(t, "the episode's error", isLog(slog.LevelError, "the agent dir cannot be written"))
	if cause := began.Attrs["cause"]; !strings.Contains(cause, "free space") {
		t.Errorf("on a full disk the episode's cause is %q, want free space named", cause)
	}
	if len(rec.find(isLog(slog.LevelWarn, "permissions had been taken"))) != 0 {
		t.Error("a full disk restored modes")
	}
}

package chat

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/volcanic/telegram-agent/internal/atomicfile"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
	"github.com/volcanic/telegram-agent/internal/storagefail"
)

// UnwritableFile is the empty file the host creates in the agent dir while
// writes to it fail (a full disk, a read-only mount), in place of the
// heartbeat: the healthcheck reports it at once rather than 90 s later.
// It is removed when writes succeed again.
const UnwritableFile = "heartbeat.unwritable"

// Storage health defaults: a write failure of a file nothing retries on its
// own (a transcript, the settings) counts for storageHold, then the next
// heartbeat's write decides; a healthy heartbeat is written at most every
// heartbeatEvery.
const (
	storageHold    = 15 * time.Second
	heartbeatEvery = 2 * time.Second
)

// storageHealth follows whether the agent dir takes writes. A failed write
// (of the journal, a transcript, the settings, the heartbeat) starts an
// episode (a storagefail.Episode: one Error line, more failures in it at
// Debug only), and sets the heartbeat's time to 1970 and creates
// UnwritableFile, so that the healthcheck fails. The episode ends, with
// one Info line and a fresh heartbeat, when every file that failed was
// written since, or its failure is older than storageHold and the
// heartbeat could be written. It is safe for concurrent use.
type storageHealth struct {
	dir     string
	logger  *slog.Logger
	now     func() time.Time
	hold    time.Duration
	episode *storagefail.Episode

	mu sync.Mutex
	// failing holds the last failure of each file that failed and was not
	// written since.
	failing map[string]time.Time
	// beat is when the heartbeat was last written.
	beat time.Time
}

// newStorageHealth starts with no episode: a marker an earlier process
// left (it died while the disk was full) is removed, and made again by the
// first write that fails.
func newStorageHealth(dir string, logger *slog.Logger) *storageHealth {
	if err := os.Remove(filepath.Join(dir, UnwritableFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		logger.Warn("the marker of an unwritable agent dir, left by an earlier run, cannot be removed; the healthcheck keeps failing", "err", err)
	}
	episode := storagefail.NewEpisode(logger, storagefail.Messages{
		Began: "the agent dir cannot be written: new messages stay unacknowledged (Telegram keeps them) and turns cannot be saved until it can; the healthcheck fails meanwhile",
		Again: "the agent dir still cannot be written",
		Ended: "the agent dir can be written again",
	})
	return &storageHealth{dir: dir, logger: logger, now: time.Now, hold: storageHold, episode: episode, failing: map[string]time.Time{}}
}

// failed records that writing file failed with err.
func (s *storageHealth) failed(file string, err error) {
	if errors.Is(err, fs.ErrPermission) {
		s.restoreModes()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failing[file] = s.now()
	// An episode begins: the healthcheck's signs go first, and then its
	// Error line, so that whoever reads the line (an operator, a test)
	// finds them. s.mu orders this with every other Failed and Succeeded.
	if !s.episode.Active() {
		s.markUnwritable()
	}
	s.episode.Failed(err, "dir", s.dir, "file", file, "cause", storageCause(err))
}

// markUnwritable shows the healthcheck the episode: the marker, or a
// heartbeat as old as can be when not even an empty file can be created.
// Neither needs free space, nor frees any.
func (s *storageHealth) markUnwritable() {
	if err := os.Chtimes(filepath.Join(s.dir, HeartbeatFile), time.Unix(0, 0), time.Unix(0, 0)); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.logger.Debug("ageing the heartbeat", "err", err)
	}
	if f, err := os.OpenFile(filepath.Join(s.dir, UnwritableFile), os.O_WRONLY|os.O_CREATE, 0o600); err == nil {
		f.Close()
	}
}

// restoreModes gives the bot's user its access to the agent dir back
// after a write was refused for permissions: an agent process of the same
// user may have changed the modes (chmod 0), and the bot, the owner, can
// undo that. The write is retried as after any failure.
func (s *storageHealth) restoreModes() {
	changed, err := atomicfile.RestoreModes(s.dir)
	if len(changed) > 0 {
		s.logger.Warn("the agent dir's permissions had been taken from the bot's user (by an agent process of the same user, or by hand): the bot gave its own access back", "dir", s.dir, "paths", len(changed), "first", changed[0])
	}
	if err != nil {
		s.logger.Warn("the agent dir's permissions cannot all be restored", "dir", s.dir, "err", err)
	}
}

// storageCause says in words what a failed write of the agent dir needs.
func storageCause(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC), errors.Is(err, syscall.EDQUOT):
		return "no free space in AGENT_DIR: free some"
	case errors.Is(err, fs.ErrPermission):
		return "permission denied: the bot's user lost its access to its own files (their modes or owner were changed); the bot restores the modes of the files it owns, the rest needs chown or chmod"
	case errors.Is(err, syscall.EROFS):
		return "AGENT_DIR is mounted read-only"
	}
	return "see err"
}

// wrote records that file was written: its failure is over. The episode
// ends with the next heartbeat (see beaten).
func (s *storageHealth) wrote(file string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.failing, file)
}

// endLocked ends the episode, if there is one.
func (s *storageHealth) endLocked() {
	if !s.episode.Succeeded("dir", s.dir) {
		return
	}
	if err := os.Remove(filepath.Join(s.dir, UnwritableFile)); err != nil && !errors.Is(err, os.ErrNotExist) {
		s.logger.Warn("the marker of the unwritable agent dir cannot be removed; the healthcheck keeps failing", "err", err)
	}
}

// dueBeat reports whether the heartbeat should be written now: not while
// a file other than the heartbeat failed within the hold, and, while all
// is well, not more often than heartbeatEvery.
func (s *storageHealth) dueBeat() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	for file, at := range s.failing {
		if file == HeartbeatFile {
			continue
		}
		if now.Sub(at) < s.hold {
			return false
		}
	}
	return s.episode.Active() || now.Sub(s.beat) >= heartbeatEvery
}

// beaten records that the heartbeat was written: every failure left (all
// past the hold, see dueBeat) is over.
func (s *storageHealth) beaten() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.beat = s.now()
	clear(s.failing)
	s.endLocked()
}

// touchHeartbeat writes the heartbeat file, whose age the healthcheck
// reads, when it is due (see storageHealth.dueBeat). It is written with
// content, not only its time set: a full disk then fails it, and the
// healthcheck with it. Once it is written after an episode, the journal's
// state changes that could not be written are written.
func (h *Host) touchHeartbeat() {
	if !h.storage.dueBeat() {
		return
	}
	stamp := time.Now().UTC().AppendFormat(nil, time.RFC3339Nano)
	if err := atomicfile.WriteFile(filepath.Join(h.cfg.AgentDir, HeartbeatFile), append(stamp, '\n'), 0o600); err != nil {
		h.storage.failed(HeartbeatFile, err)
		return
	}
	h.storage.beaten()
	if err := h.journal.Flush(); err != nil {
		h.storage.failed(ledger.File, err)
	}
}

// journaled records how a write of the inbound journal went.
func (s *storageHealth) journaled(err error) {
	if err != nil {
		s.failed(ledger.File, err)
		return
	}
	s.wrote(ledger.File)
}

// tellSessionError tells the chat that its session cannot be opened: in
// words when the agent dir cannot be written (reopening a session may
// write to its transcript), else with the error. It returns the text and
// the error of sending it.
func (h *Host) tellSessionError(ctx context.Context, t target, err error, replyTo int) (string, error) {
	text := "⚠️ The session cannot be opened: " + err.Error()
	if storagefail.Is(err) {
		h.storage.failed("transcript", err)
		text = "⚠️ The conversation cannot be opened: the bot's disk is full or cannot be written. Send your message again once the operator has freed space."
	} else {
		h.logger.Error("open session", "scope", t.String(), "err", err)
	}
	return text, h.out.sendText(ctx, t, text, replyTo)
}

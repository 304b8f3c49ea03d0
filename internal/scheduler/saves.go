package scheduler

import (
	"log/slog"

	"github.com/volcanic/telegram-agent/internal/storagefail"
)

// diskText is what the model and the chat are told of a disk that refuses
// the jobs file (full, read-only), in place of the error, which names the
// file's path.
const diskText = "the bot's disk is full or cannot be written"

// newSaveEpisode returns the episode of the jobs file's failed saves that
// only the log reports (a run's record, a due one-shot job held back): a
// scheduler firing on a full disk logs one Error for it, not one per run.
func newSaveEpisode(logger *slog.Logger) *storagefail.Episode {
	return storagefail.NewEpisode(logger, storagefail.Messages{
		Began: "scheduler: the jobs file cannot be written: runs are not recorded and due one-shot jobs wait until it can; failures are logged at debug until it is written again",
		Again: "scheduler: the jobs file still cannot be written",
		Ended: "scheduler: the jobs file is written again",
	})
}

// saveEpisode returns the episode of failed saves.
func (s *Scheduler) saveEpisode() *storagefail.Episode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saves
}

// saveCause words why a save failed with err, for the model or the chat:
// in words when the disk refuses the file, else the error as it is.
func saveCause(err error) string {
	if storagefail.Is(err) {
		return diskText
	}
	return err.Error()
}

package agent

import (
	"time"

	"github.com/volcanic/telegram-agent/internal/storagefail"
)

// transcriptQuiet is how long after a transcript write that failed the
// agent's episode of failed writes lasts at least (by default): on a nearly full disk a
// user's short message still fits and a tool's long result does not, and
// one episode is logged rather than one per turn.
const transcriptQuiet = time.Minute

// newTranscriptEpisode returns the agent's episode of transcript writes
// that fail. It counts the failures the agent only logs (a tool result kept
// in memory, a compaction not recorded); one it returns (a turn's message)
// its caller reports. Every write that succeeds may end it.
func newTranscriptEpisode(a *Agent) *storagefail.Episode {
	return storagefail.NewEpisode(a.logger, storagefail.Messages{
		Began: "agent: a transcript cannot be written: what it lacks is kept in memory until the session is reopened; failures are logged at debug until a transcript is written again",
		Again: "agent: a transcript still cannot be written",
		Ended: "agent: transcripts are written again",
	}, storagefail.WithQuiet(a.cfg.transcriptQuiet))
}

// appendTranscript writes m to the session's transcript, if it has one,
// and tells the agent's episode when it did.
func (s *Session) appendTranscript(m Message) error {
	if s.tr == nil {
		return nil
	}
	return s.wroteTranscript(s.tr.appendMessage(m))
}

// wroteTranscript records how a transcript write went, and returns err.
func (s *Session) wroteTranscript(err error) error {
	if err == nil {
		s.agent.transcripts.Succeeded()
	}
	return err
}

// transcriptFailed logs a transcript write that failed with err, with
// attrs, in the agent's episode.
func (s *Session) transcriptFailed(err error, attrs ...any) {
	s.agent.transcripts.Failed(s.agent.red.RedactError(err), append([]any{"session", s.id}, attrs...)...)
}

// unrecordedText is the result of a tool call not run because the result
// of one before it could not be written to the transcript (err): the model
// sees it in the history the session keeps in memory. It says why in
// words, without the path of the file.
func unrecordedText(err error) string {
	if storagefail.Is(err) {
		return "Not run: the turn stopped before this call because the conversation could not be saved (the bot's disk is full or cannot be written)."
	}
	return "Not run: the turn stopped before this call because the conversation could not be saved."
}

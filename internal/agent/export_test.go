package agent

// Seams for the external tests of this package (package agent_test).

import "log/slog"

const (
	AbortedText         = abortedText
	CharsPerToken       = charsPerToken
	EntryCompaction     = entryCompaction
	EntryMessage        = entryMessage
	ImageTokens         = imageTokens
	MessageTokens       = messageTokens
	OldResultMaxBytes   = oldResultMaxBytes
	SummaryHeader       = summaryHeader
	SummarySystemPrompt = summarySystemPrompt
	ToolSpecOverhead    = toolSpecOverhead
)

type (
	Transcript      = transcript
	TranscriptEntry = transcriptEntry
	TranscriptFile  = transcriptFile
)

var (
	CloneResult      = cloneResult
	EstimateMessages = estimateMessages
	OpenTranscript   = openTranscript
	ParseSchema      = parseSchema
	RedactValue      = redactValue
)

// SetOpenTranscript replaces how a reads a session's transcript.
func (a *Agent) SetOpenTranscript(f func(path string, logger *slog.Logger) (*Transcript, []Message, error)) {
	a.openTranscript = f
}

// ContextLimits returns a's context window and compaction threshold.
func (a *Agent) ContextLimits() (window, threshold int) { return a.cfg.contextLimits() }

// SetFrontEnd replaces the front end of s's running turn.
func (s *Session) SetFrontEnd(f func(Event)) {
	s.mu.Lock()
	s.frontEnd = f
	s.mu.Unlock()
}

// WrapTranscriptFile replaces the file under s's transcript with what wrap
// makes of it, for fault injection.
func (s *Session) WrapTranscriptFile(wrap func(TranscriptFile) TranscriptFile) { s.tr.f = wrap(s.tr.f) }

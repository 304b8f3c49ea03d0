package agent

// Seams for the external tests of this package (package agent_test).

import (
	"log/slog"
	"sync"
	"syscall"
	"time"
)

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
)

var (
	ShownSettled     = shownSettled
	CloneResult      = cloneResult
	EstimateMessages = estimateMessages
	OpenTranscript   = openTranscript
	ParseSchema      = parseSchema
	ParseArguments   = (*argumentSchema).parseArguments
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

// FailTranscriptAppend makes the n-th append (from 1) to s's transcript
// from now on fail without writing.
func (s *Session) FailTranscriptAppend(n int) {
	s.tr.log = &failingLog{entryLog: s.tr.log, failAt: n}
}

// failingLog fails one append.
type failingLog struct {
	entryLog
	mu      sync.Mutex
	appends int
	failAt  int
}

func (l *failingLog) Append(entries ...any) error {
	l.mu.Lock()
	l.appends++
	fail := l.appends == l.failAt
	l.mu.Unlock()
	if fail {
		return syscall.ENOSPC
	}
	return l.entryLog.Append(entries...)
}

// Options only tests set, under the names the tests use; production keeps
// the defaults.

// WithContextReserve is withContextReserve, for the tests.
func WithContextReserve(tokens int) Option { return withContextReserve(tokens) }

// WithTranscriptQuiet is withTranscriptQuiet, for the tests.
func WithTranscriptQuiet(d time.Duration) Option { return withTranscriptQuiet(d) }

// WithMaxSteps is withMaxSteps, for the tests.
func WithMaxSteps(n int) Option { return withMaxSteps(n) }

package scheduler

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
	"time"
	"unicode"
)

// Job is one scheduled job of a chat, as jobs.json keeps it and the chat
// host's /jobs lists it.
type Job struct {
	// ID identifies the job (eight hex digits).
	ID string `json:"id"`
	// Name is the short name shown when the job runs ("⏰ Job <name>").
	Name string `json:"name"`
	// Target is the scope of the chat the job belongs to.
	Target string `json:"target"`
	// Schedule is the schedule as it was given: a 5-field cron expression,
	// a descriptor (@hourly, @daily, @weekly, @every <duration>) or a
	// one-shot time.
	Schedule string `json:"schedule"`
	// At is the instant of a one-shot job (a local time resolved in the
	// chat's zone when the job was scheduled); zero for a recurring job.
	At time.Time `json:"at,omitzero"`
	// Prompt is what the model is asked when the job fires.
	Prompt string `json:"prompt"`
	// Script, when set, makes the job a watcher: a bash script whose output
	// wakes the model.
	Script string `json:"script,omitempty"`
	// Created is when the job was scheduled.
	Created time.Time `json:"created"`
	// LastRun is when the job last fired; zero if it never did.
	LastRun time.Time `json:"last_run,omitzero"`
	// LastOutcome says how the last run ended, in a few words.
	LastOutcome string `json:"last_outcome,omitempty"`
	// Failures counts a watcher's consecutive failed runs: the chat is
	// alerted when it becomes 1 and told of the recovery when a run
	// succeeds again.
	Failures int `json:"failures,omitempty"`
	// Fired, on a one-shot job, is when it fired: the file keeps the job
	// with it from just before its run starts until the chat took its
	// prompt (the chat's journal holds it from then on) or the run ended
	// without one. A job found with it at start-up was cut short by a
	// crash or a restart before its prompt reached the chat: it does not
	// run, its chat is told, and it leaves the file. Files written before
	// the field existed have no job with it.
	Fired time.Time `json:"fired,omitzero"`
}

// OneShot reports whether the job runs once, at At.
func (j Job) OneShot() bool { return !j.At.IsZero() }

// CutShort reports whether the job is a one-shot job a restart cut short
// as it fired (Fired is set): it never runs again, and waits only for its
// chat to be told so at start-up. List and All show such a job; Cancel
// removes it untold.
func (j Job) CutShort() bool { return !j.Fired.IsZero() }

// Watcher reports whether the job runs a script.
func (j Job) Watcher() bool { return j.Script != "" }

// Kind returns "watcher" or "prompt".
func (j Job) Kind() string {
	if j.Watcher() {
		return "watcher"
	}
	return "prompt"
}

// label is how the chat host marks the answer to a job's turn.
func (j Job) label(late bool) string {
	l := "⏰ Job " + j.Name
	if late {
		l += " (late)"
	}
	return l
}

// newID returns a random job id of eight hex digits.
func newID() string {
	var b [4]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails
	return hex.EncodeToString(b[:])
}

// maxNameLen bounds a job's name, in bytes.
const maxNameLen = 64

// defaultName derives a job's name from its prompt: its first few words,
// lower case, joined by hyphens ("Summarise my inbox" -> "summarise-my-inbox").
func defaultName(prompt, id string) string {
	words := strings.FieldsFunc(strings.ToLower(prompt), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	var b strings.Builder
	for i, w := range words {
		if i == 4 || b.Len()+len(w)+1 > 32 {
			break
		}
		if b.Len() > 0 {
			b.WriteByte('-')
		}
		b.WriteString(w)
	}
	if b.Len() == 0 {
		return "job-" + id
	}
	return b.String()
}

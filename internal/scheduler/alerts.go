package scheduler

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// alertTailLines is how many lines of stderr a failure alert quotes.
const alertTailLines = 10

// failureAlert is the chat's message about a watcher's first failure in a
// row: the reason and the tail of its (redacted) stderr.
func failureAlert(job Job, reason, stderrTail string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "⚠️ Job %s (%s) failed: %s", job.Name, job.ID, reason)
	if tail := lastLines(stderrTail, alertTailLines); tail != "" {
		fmt.Fprintf(&b, "\nstderr:\n%s", tail)
	}
	b.WriteString("\nFurther failures stay quiet until it recovers.")
	return b.String()
}

// recoveryNotice is the chat's message when a failing watcher succeeds
// again.
func recoveryNotice(job Job, failures int) string {
	runs := "run"
	if failures != 1 {
		runs = "runs"
	}
	return fmt.Sprintf("✅ Job %s (%s) recovered after %d failed %s.", job.Name, job.ID, failures, runs)
}

// unfiredAlert is the chat's message about a one-shot job that came due
// but was not run, because the jobs file could not record that it fired.
func unfiredAlert(job Job, err error) string {
	return fmt.Sprintf("⚠️ Job %s (%s) is due but did not run: the jobs file could not record that it fired (%s), "+
		"and a one-shot job must never run twice. It runs once the file can be written; cancel it if it should not.", job.Name, job.ID, saveCause(err))
}

// unpromptedAlert is the chat's message about a one-shot job that fired
// but whose prompt the chat did not take (err says why): it does not run
// again, so the chat is told what it was. The prompt is quoted redacted
// by red before it is cut, never cut first: a cut can end inside the
// encoded form of a secret (its base64, its hex), and the part left is one
// the redactor no longer recognises. The caller still redacts the whole
// alert, for the name and the error.
func unpromptedAlert(job Job, err error, red *redactor.Redactor) string {
	return fmt.Sprintf("⚠️ Job %s (%s) was due but could not run: the chat did not take its prompt (%s). "+
		"It was a one-shot job, so it does not run again; schedule it again if it still matters. It said: %s",
		job.Name, job.ID, saveCause(err), shortPrompt(red.Redact(job.Prompt)))
}

// shortPrompt is a job's prompt as an alert quotes it: its first 200
// bytes (cut at a rune), on one line. p must be redacted already.
func shortPrompt(p string) string {
	p = strings.Join(strings.Fields(p), " ")
	if len(p) <= 200 {
		return p
	}
	cut := 200
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return p[:cut] + "…"
}

// silentWord is what a watcher prints to stay quiet.
const silentWord = "[SILENT]"

// watcherPrompt is the turn a watcher's output starts: the job's prompt,
// then the redacted output, with a note when it was cut.
func watcherPrompt(job Job, output string, cut bool, limit int, late string) string {
	var b strings.Builder
	b.WriteString(late)
	b.WriteString(job.Prompt)
	fmt.Fprintf(&b, "\n\nOutput of the watcher script of job %s (%s):\n", job.Name, job.ID)
	b.WriteString(strings.ToValidUTF8(output, "\uFFFD"))
	if cut {
		fmt.Fprintf(&b, "\n[output cut: only the first %d bytes are shown]", limit)
	}
	return b.String()
}

package scheduler

import (
	"fmt"
	"strings"
	"unicode/utf8"
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
// again, so the chat is told what it was.
func unpromptedAlert(job Job, err error) string {
	return fmt.Sprintf("⚠️ Job %s (%s) was due but could not run: the chat did not take its prompt (%s). "+
		"It was a one-shot job, so it does not run again; schedule it again if it still matters. It said: %s",
		job.Name, job.ID, saveCause(err), shortPrompt(job.Prompt))
}

// shortPrompt is a job's prompt as an alert quotes it: its first 200
// bytes (cut at a rune), on one line.
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

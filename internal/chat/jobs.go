package chat

import (
	"context"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
)

// JobBoard is what /jobs shows and cancels: the scheduler's jobs of one
// target, adapted by main.
type JobBoard interface {
	ListJobs(target string) []JobView
	CancelJob(target, id string) error
}

// JobView is one scheduled job as /jobs lists it.
type JobView struct {
	ID, Name, Schedule string
	// Next is the job's next run; zero when it has none.
	Next time.Time
}

// listJobs handles /jobs.
func (h *Host) listJobs(ctx context.Context, t target, replyTo int) {
	if h.jobs == nil {
		h.sendNotice(ctx, t, "Scheduling is not enabled.", replyTo)
		return
	}
	text, markup := h.jobsMessage(t)
	p := h.messageParams(t, text, "", replyTo)
	p.Buttons = markup
	if _, err := h.quick.SendMessage(ctx, p); err != nil {
		h.logSendError("jobs", t, err)
	}
}

// jobsMessage renders t's jobs, each with its schedule in words where it
// is a common one and its next run in the chat's zone, and a cancel button
// per job.
func (h *Host) jobsMessage(t target) (string, *models.InlineKeyboardMarkup) {
	jobs := h.jobs.ListJobs(t.String())
	rows := [][]models.InlineKeyboardButton{}
	if len(jobs) == 0 {
		return "No scheduled jobs.", &models.InlineKeyboardMarkup{InlineKeyboard: rows}
	}
	loc := h.location(t.String())
	var b strings.Builder
	for _, j := range jobs {
		b.WriteString(jobLine(j, loc, time.Now()) + "\n")
		rows = append(rows, []models.InlineKeyboardButton{{Text: "✖ Cancel " + h.shortened(jobName(j), 30), CallbackData: callbackCancelJob + ":" + j.ID}})
	}
	return strings.TrimRight(b.String(), "\n"), &models.InlineKeyboardMarkup{InlineKeyboard: rows}
}

// jobLine is a job's line in /jobs: its name, its schedule in words and
// its next run in loc; a one-shot job reads "once, <when>".
func jobLine(j JobView, loc *time.Location, now time.Time) string {
	if isOneShot(j.Schedule) {
		when := strings.TrimSpace(j.Schedule)
		if !j.Next.IsZero() {
			when = formatWhen(j.Next.In(loc), now)
		}
		return "• " + jobName(j) + ": once, " + when
	}
	next := "no next run"
	if !j.Next.IsZero() {
		next = "next " + formatWhen(j.Next.In(loc), now)
	}
	return "• " + jobName(j) + ": " + describeSchedule(j.Schedule) + ", " + next
}

// jobName is what a job is called in the chat: its name, else its id.
func jobName(j JobView) string {
	if j.Name != "" {
		return j.Name
	}
	return j.ID
}

// cancelJob handles a job's cancel button on the /jobs message msgID: it
// cancels the job, says so by its name, and re-renders the list in place
// (a job that is already gone gets a toast, never the scheduler's error).
func (h *Host) cancelJob(ctx context.Context, t target, msgID int, id string, answer func(string)) {
	if h.jobs == nil {
		answer("Scheduling is not enabled.")
		return
	}
	var job *JobView
	for _, j := range h.jobs.ListJobs(t.String()) {
		if j.ID == id {
			job = &j
			break
		}
	}
	switch {
	case job == nil:
		answer("That job is already gone.")
	default:
		if err := h.jobs.CancelJob(t.String(), id); err != nil {
			h.logger.Warn("cancelling a job failed", "scope", t.String(), "job", id, "err", err)
			answer("Could not cancel that job; it may be gone already.")
			break
		}
		answer("Cancelled.")
		h.sendNotice(ctx, t, "✖ Cancelled job “"+jobName(*job)+"”.", 0)
	}
	text, markup := h.jobsMessage(t)
	if _, err := h.quick.EditMessageText(ctx, botapi.Edit{ChatID: t.chatID, MessageID: msgID, Text: text, Buttons: markup}); err != nil {
		h.logSendError("jobs edit", t, err)
	}
}

package chat

import (
	"context"
	"log/slog"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"
	"github.com/volcanic/telegram-agent/internal/chat/turnview"
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

// jobsView is /jobs and its cancel buttons: the job board's jobs of a
// chat, in the chat's zone.
type jobsView struct {
	// board is the scheduler's jobs (nil: scheduling is not enabled; see
	// WithJobBoard).
	board    JobBoard
	sessions *sessions
	logger   *slog.Logger
	out      outlet
	menu     menu
}

// command handles /jobs, off the polling goroutine.
func (v *jobsView) command(_ context.Context, in *inbound, _ func(string)) {
	t := in.target
	v.out.post(t, func(ctx context.Context, n turnview.Noticer) { v.list(ctx, n, t, in.msg.ID) })
}

// list sends t's jobs, with their cancel buttons.
func (v *jobsView) list(ctx context.Context, n turnview.Noticer, t target, replyTo int) {
	if v.board == nil {
		_ = n.Say(ctx, "Scheduling is not enabled.", replyTo)
		return
	}
	text, markup := v.message(t)
	v.menu.send(ctx, n, t, "jobs", text, markup, replyTo)
}

// message renders t's jobs, each with its schedule in words where it is a
// common one and its next run in the chat's zone, and a cancel button per
// job.
func (v *jobsView) message(t target) (string, *models.InlineKeyboardMarkup) {
	jobs := v.board.ListJobs(t.String())
	rows := [][]models.InlineKeyboardButton{}
	if len(jobs) == 0 {
		return "No scheduled jobs.", &models.InlineKeyboardMarkup{InlineKeyboard: rows}
	}
	loc := v.sessions.location(t.String())
	var b strings.Builder
	for _, j := range jobs {
		b.WriteString(jobLine(j, loc, time.Now()) + "\n")
		rows = append(rows, []models.InlineKeyboardButton{{Text: "✖ Cancel " + v.out.shortened(jobName(j), 30), CallbackData: callbackCancelJob + ":" + j.ID}})
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

// press handles a job's cancel button, off the polling goroutine.
func (v *jobsView) press(p press) {
	v.out.post(p.target, func(ctx context.Context, n turnview.Noticer) {
		v.cancel(ctx, n, p.target, p.msgID, p.arg, func(text string) { p.answer(ctx, n, text) })
	})
}

// cancel handles a job's cancel button on the /jobs message msgID: it
// cancels the job, says so by its name, and re-renders the list in place
// (a job that is already gone gets a toast, never the scheduler's error).
func (v *jobsView) cancel(ctx context.Context, n turnview.Noticer, t target, msgID int, id string, answer func(string)) {
	if v.board == nil {
		answer("Scheduling is not enabled.")
		return
	}
	var job *JobView
	for _, j := range v.board.ListJobs(t.String()) {
		if j.ID == id {
			job = &j
			break
		}
	}
	switch {
	case job == nil:
		answer("That job is already gone.")
	default:
		if err := v.board.CancelJob(t.String(), id); err != nil {
			v.logger.Warn("cancelling a job failed", "scope", t.String(), "job", id, "err", err)
			answer("Could not cancel that job; it may be gone already.")
			break
		}
		answer("Cancelled.")
		_ = n.Say(ctx, "✖ Cancelled job “"+jobName(*job)+"”.", 0)
	}
	text, markup := v.message(t)
	v.menu.edit(ctx, n, t, "jobs edit", msgID, text, markup)
}

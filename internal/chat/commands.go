package chat

import (
	"context"
	"encoding/json"
	"fmt"
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

// callbackCancelJob prefixes the callback data of a job's cancel button.
const callbackCancelJob = "cancel:"

// botCommands are the commands registered with setMyCommands.
func botCommands() []models.BotCommand {
	return []models.BotCommand{
		{Command: "start", Description: "what this bot is"},
		{Command: "help", Description: "the commands"},
		{Command: "new", Description: "start a fresh session (the old one is kept)"},
		{Command: "stop", Description: "stop the running turn, drop queued messages"},
		{Command: "status", Description: "model, context use, what is running, time zone"},
		{Command: "compact", Description: "summarise older messages now to free context"},
		{Command: "model", Description: "show or switch this chat's model: /model <name>"},
		{Command: "tz", Description: "set this chat's time zone: /tz Europe/Berlin"},
		{Command: "jobs", Description: "scheduled jobs, with cancel buttons"},
		{Command: "retry", Description: "run the message a restart interrupted again"},
	}
}

const helpText = `I am an AI agent: I answer your messages and can run commands, read and write files in my workspace, and schedule jobs.

Send text, voice notes, photos or files.

/new — start a fresh session (the old conversation is kept on disk)
/stop — stop the running turn and its processes, drop queued messages
/status — model, session size, context use, what is running and queued, time zone
/compact — summarise the older messages now, to free context
/model [name] — show the models, or switch this chat to one
/tz <zone> — set this chat's time zone, e.g. /tz Europe/Berlin
/jobs — scheduled jobs, with cancel buttons
/retry — run the message a restart interrupted again`

const startText = `Hi! I'm your agent: an AI that answers your messages and can run commands, read and write files in its workspace, and schedule jobs for you.

Just write what you need, in your own words; you can also send voice notes, photos and files. While I work you see what I run, with a Stop button.

/new starts a fresh conversation, /stop stops me, /status shows what I'm doing, and /help lists every command.`

// dispatch acts on an accepted message: a command at once, a turn queued on
// its chat's worker, a message the bot cannot read with a reply saying so.
func (h *Host) dispatch(ctx context.Context, in *inbound) {
	if in.unsupported != "" {
		h.notice(in.target, unsupportedText(in.unsupported), in.msg.ID)
		return
	}
	if !in.startsTurn {
		h.handleCommand(ctx, in)
		return
	}
	h.queueTurn(in, in.updateID)
}

// queueTurn queues in as a turn; the user is told when it has to wait, or
// that the chat's queue is full (the message is then dropped).
func (h *Host) queueTurn(in *inbound, journalID int64) {
	w, err := h.worker(in.target)
	if err != nil {
		return // shutting down: the journal keeps it for after the restart
	}
	waits, queued, err := w.enqueue(&workItem{kind: itemMessage, in: in, journalID: journalID})
	switch {
	case err != nil:
		h.logger.Warn("a chat's queue is full; the message was refused", "scope", in.target.String(), "queued", queued)
		h.journalDone(journalID)
		h.notice(in.target, busyText(queued), in.msg.ID)
	case waits:
		h.notice(in.target, "⏳ Queued: I will get to this after the current turn.", in.msg.ID)
	}
}

// handleCommand runs a known command.
func (h *Host) handleCommand(ctx context.Context, in *inbound) {
	t, scope := in.target, in.target.String()
	// Replies go out off the polling goroutine (see post).
	reply := func(text string) { h.notice(t, text, in.msg.ID) }
	switch in.command {
	case "start":
		reply(startText)
	case "help":
		reply(helpText)
	case "new":
		h.queueCommand(t, itemNew, reply, "⏳ A new session will start after the current turn (/stop ends that turn now).")
	case "stop":
		msg, _ := h.stopChat(t, "")
		reply(msg)
	case "status":
		reply(h.status(ctx, t))
	case "compact":
		h.queueCommand(t, itemCompact, reply, "⏳ The conversation will be compacted after the current turn.")
	case "model":
		reply(h.setModel(ctx, t, in.args))
	case "tz":
		reply(h.setTimeZone(ctx, t, in.args))
	case "jobs":
		h.post(t, func(ctx context.Context) { h.listJobs(ctx, t, in.msg.ID) })
	case "retry":
		e, ok := h.journal.takeInterrupted(scope)
		if !ok {
			reply("Nothing to retry: no message of this chat was interrupted by a restart.")
			return
		}
		var u models.Update
		if err := json.Unmarshal(e.Update, &u); err != nil || u.Message == nil {
			reply("The interrupted message cannot be read back; please send it again.")
			return
		}
		again := h.classifyUpdate(&u)
		if again == nil || !again.startsTurn {
			reply("The interrupted message cannot be replayed; please send it again.")
			return
		}
		e.State = statePending
		if err := h.journal.write(e); err != nil {
			h.logger.Error("journal", "err", err)
		}
		reply("🔁 Running your interrupted message again.")
		h.queueTurn(again, e.ID)
	default:
		reply("Unknown command. /help lists what I understand.")
	}
}

// queueCommand queues a command that runs in order with t's turns; the
// user is told waiting when it has to wait.
func (h *Host) queueCommand(t target, kind itemKind, reply func(string), waiting string) {
	w, err := h.worker(t)
	if err != nil {
		return // shutting down
	}
	waits, queued, err := w.enqueue(&workItem{kind: kind})
	switch {
	case err != nil:
		reply(busyText(queued))
	case waits:
		reply(waiting)
	}
}

// nothingRunning is /stop's answer when there was nothing to stop.
const nothingRunning = "Nothing is running."

// staleStop is the answer to a Stop button whose turn has ended.
const staleStop = "That turn already ended."

// stopChat cancels t's running item and drops its queued messages; a
// queued /new or /compact still runs, next. A Stop button's turnID limits
// it to that turn: when another one runs, or none, it does nothing and
// says that turn already ended. It returns what to tell the user and
// whether anything was stopped or dropped.
func (h *Host) stopChat(t target, turnID string) (string, bool) {
	w := h.existingWorker(t)
	if w == nil {
		if turnID != "" {
			return staleStop, false
		}
		return nothingRunning, false
	}
	r := w.stop(turnID)
	if r.stale {
		return staleStop, false
	}
	var parts []string
	switch {
	case r.stopped && r.dropped > 0:
		parts = append(parts, "⏹ Stopped the running turn and dropped "+counted(r.dropped, "queued message", "queued messages")+".")
	case r.stopped:
		parts = append(parts, "⏹ Stopped the running turn.")
	case r.dropped > 0:
		parts = append(parts, "⏹ Dropped "+counted(r.dropped, "queued message", "queued messages")+".")
	}
	for _, k := range r.kept {
		switch k {
		case itemNew:
			parts = append(parts, "The new session you asked for starts now.")
		case itemCompact:
			parts = append(parts, "The compaction you asked for runs now.")
		}
	}
	if len(parts) == 0 {
		return nothingRunning, false
	}
	return strings.Join(parts, " "), r.stopped || r.dropped > 0
}

// status describes t's session and worker.
func (h *Host) status(ctx context.Context, t target) string {
	var b strings.Builder
	model, messages, usage := h.cfg.Model, 0, ""
	if s, err := h.session(ctx, t); err == nil {
		model, messages = s.Model(), len(s.Messages())
		usage = contextLines(s.ContextUsage(), h.location(t.String())) + "\n"
	}
	fmt.Fprintf(&b, "Model: %s\nSession: %s (%s)\n%s", model, h.sessionID(t), counted(messages, "message", "messages"), usage)
	running, queued := (*workItem)(nil), 0
	if w := h.existingWorker(t); w != nil {
		running, queued = w.snapshot()
	}
	switch {
	case running == nil:
		b.WriteString("Running: nothing\n")
	case running.kind == itemPrompt:
		fmt.Fprintf(&b, "Running: scheduled prompt %q\n", running.label)
	case running.kind == itemCompact:
		b.WriteString("Running: a compaction\n")
	default:
		b.WriteString("Running: a turn\n")
	}
	fmt.Fprintf(&b, "Queued: %d\n", queued)
	zone := h.TimeZone(t.String())
	if zone == "" {
		zone = "the host's (" + time.Now().Format("MST") + ")"
	}
	fmt.Fprintf(&b, "Time zone: %s", zone)
	return b.String()
}

// setTimeZone handles /tz.
func (h *Host) setTimeZone(ctx context.Context, t target, arg string) string {
	scope := t.String()
	arg = strings.TrimSpace(arg)
	if arg == "" {
		zone := h.TimeZone(scope)
		if zone == "" {
			zone = "the host's"
		}
		return "This chat's time zone is " + zone + ". Set it with /tz <IANA zone>, for example /tz Europe/Berlin or /tz America/New_York."
	}
	if _, err := time.LoadLocation(arg); err != nil || arg == "Local" || strings.EqualFold(arg, "local") {
		return fmt.Sprintf("%q is not an IANA time zone. Use a name such as Europe/Berlin, America/New_York, Asia/Tokyo or UTC.", shorten(arg, 60))
	}
	if err := h.settings.update(scope, func(c *chatSettings) { c.TimeZone = arg }); err != nil {
		h.logger.Error("tz", "err", err)
		return "⚠️ The time zone could not be saved."
	}
	if s, err := h.session(ctx, t); err == nil {
		if err := s.SetTimeZone(arg); err != nil {
			h.logger.Warn("session time zone", "err", err)
		}
	}
	return "🕒 Time zone set to " + arg + "."
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
		b.WriteString(jobLine(j, loc) + "\n")
		rows = append(rows, []models.InlineKeyboardButton{{Text: "✖ Cancel " + shorten(jobName(j), 30), CallbackData: callbackCancelJob + j.ID}})
	}
	return strings.TrimRight(b.String(), "\n"), &models.InlineKeyboardMarkup{InlineKeyboard: rows}
}

// jobLine is a job's line in /jobs: its name, its schedule in words and
// its next run in loc; a one-shot job reads "once, <when>".
func jobLine(j JobView, loc *time.Location) string {
	const layout = "Mon 2 Jan 15:04 MST"
	if isOneShot(j.Schedule) {
		when := strings.TrimSpace(j.Schedule)
		if !j.Next.IsZero() {
			when = j.Next.In(loc).Format(layout)
		}
		return "• " + jobName(j) + ": once, " + when
	}
	next := "no next run"
	if !j.Next.IsZero() {
		next = "next " + j.Next.In(loc).Format(layout)
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

// handleCallback answers an inline button: Stop, or a job's cancel. A stop
// acts at once; the answers go out off the polling goroutine (see post).
func (h *Host) handleCallback(q *models.CallbackQuery) {
	answer := func(ctx context.Context, text string) {
		if err := h.quick.AnswerCallbackQuery(ctx, q.ID, text); err != nil {
			h.logger.Debug("answerCallbackQuery", "err", err)
		}
	}
	if !h.allowed[q.From.ID] {
		h.logger.Debug("ignored a button press from a user who is not allowed", "user_id", q.From.ID)
		return
	}
	if q.Message.Message == nil {
		h.notices.Go(func() {
			ctx, cancel := context.WithTimeout(h.noticeCtx, noticeTimeout)
			defer cancel()
			answer(ctx, "")
		})
		return
	}
	t := targetOf(q.Message.Message)
	switch {
	case q.Data == CallbackStop || strings.HasPrefix(q.Data, CallbackStop+":"):
		// A button without a turn id is from before turns had ids: stale.
		turnID, _ := strings.CutPrefix(q.Data, CallbackStop)
		turnID, _ = strings.CutPrefix(turnID, ":")
		msg, acted := staleStop, false
		if turnID != "" {
			msg, acted = h.stopChat(t, turnID)
		}
		msgID := q.Message.Message.ID
		h.post(t, func(ctx context.Context) {
			answer(ctx, msg)
			switch {
			case acted:
				h.sendNotice(ctx, t, "⏹ Stopped.", 0)
			case msg == staleStop:
				if err := h.removeButtons(ctx, t, msgID); err != nil {
					h.logger.Debug("removing a stale Stop button failed", "scope", t.String(), "err", err)
				}
			}
		})
	case strings.HasPrefix(q.Data, callbackCancelJob):
		msgID, id := q.Message.Message.ID, strings.TrimPrefix(q.Data, callbackCancelJob)
		h.post(t, func(ctx context.Context) {
			h.cancelJob(ctx, t, msgID, id, func(text string) { answer(ctx, text) })
		})
	default:
		h.post(t, func(ctx context.Context) { answer(ctx, "") })
	}
}

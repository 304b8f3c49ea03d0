package chat

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/chat/ledger"
)

// dispatch acts on an accepted message: a command at once, a turn queued on
// its chat's worker, a message the bot cannot read with a reply saying so.
func (h *Host) dispatch(ctx context.Context, in *inbound) {
	if in.unsupported != "" {
		h.replyFunc(in)(unsupportedText(in.unsupported))
		return
	}
	if in.approvalHint {
		h.replyFunc(in)(approvalHint)
		return
	}
	if !in.startsTurn {
		h.handleCommand(ctx, in)
		return
	}
	if in.edited && h.replaceQueued(in) {
		return
	}
	h.queueTurn(in, in.updateID)
}

// replaceQueued puts the edit in in place of its message while that waits
// in the chat's queue, and reports whether it did; the original's journal
// entry is done then, the edit's takes its place.
func (h *Host) replaceQueued(in *inbound) bool {
	w := h.existingWorker(in.target)
	if w == nil {
		return false
	}
	w.mu.Lock()
	var old ledger.Origin
	replaced := false
	for _, it := range w.queue {
		if it.kind == itemMessage && it.in != nil && it.in.msg.ID == in.msg.ID {
			// The edit replaces a message nobody has answered: it is not
			// marked as an edit for the model.
			edit := *in
			edit.edited = false
			old, it.in, it.origin, replaced = it.origin, &edit, ledger.Update(in.updateID), true
			break
		}
	}
	w.mu.Unlock()
	if replaced {
		h.journalDone(old)
		h.notice(in.target, "✏️ Updated the queued message.", in.msg.ID)
	}
	return replaced
}

// queueTurn queues in as a turn; the user is told when it has to wait, or
// that the chat's queue is full (the message is then dropped).
func (h *Host) queueTurn(in *inbound, updateID int64) {
	w, err := h.worker(in.target)
	if err != nil {
		return // shutting down: the journal keeps it for after the restart
	}
	waits, queued, err := w.enqueue(&workItem{kind: itemMessage, in: in, origin: ledger.Update(updateID), state: ledger.Queued})
	switch {
	case err != nil:
		// The refusal is the message's outcome: its journal entry is done
		// only once the chat was told (sent again while Telegram does not
		// take it), so that a crash before that leaves it pending,
		// reported after the restart, rather than lost without a word.
		h.logger.Warn("a chat's queue is full; the message was refused", "scope", in.target.String(), "queued", queued)
		h.report(in.target, busyText(queued), in.msg.ID, nil, func() { h.journalDone(ledger.Update(updateID)) })
	case waits:
		h.post(in.target, func(ctx context.Context) { h.noteQueued(ctx, w, in.msg.ID) })
	}
}

// noteQueued tells the chat that a message waits: the first one behind a
// running item gets a notice, the next ones edit it to say how many wait,
// so that many queued messages make one notice, not one each.
func (h *Host) noteQueued(ctx context.Context, w *chatWorker, replyTo int) {
	w.mu.Lock()
	id, waiting, running := w.queuedNotice, 0, w.running
	for _, it := range w.queue {
		if it.kind == itemMessage {
			waiting++
		}
	}
	w.mu.Unlock()
	t := w.target
	if id != 0 && waiting > 1 {
		text := fmt.Sprintf("⏳ Queued: %s; I will get to them after the current turn.", counted(waiting, "message", "messages"))
		if _, err := h.quick.EditMessageText(ctx, botapi.Edit{ChatID: t.chatID, MessageID: id, Text: text}); err == nil {
			return
		}
	}
	msg, err := h.quick.SendMessage(ctx, h.messageParams(t, "⏳ Queued: I will get to this after the current turn.", "", replyTo))
	if err != nil {
		h.logSendError("queued notice", t, err)
		return
	}
	w.mu.Lock()
	if w.running != nil && w.running == running {
		w.queuedNotice = msg.ID
	}
	w.mu.Unlock()
}

// command is one bot command. The table of commands (commands) is the one
// source of the menu registered with setMyCommands, of /help and of the
// dispatch; docs/docs_test.go holds the operator guide's Commands table
// against it.
type command struct {
	// name is the command without its slash.
	name string
	// args is its argument as /help and the guide show it ("[name]",
	// "<zone>"); "" for none.
	args string
	// menu is the description in Telegram's command menu.
	menu string
	// help is the command's line in /help; "" keeps it out of /help.
	help string
	// run carries the command out; reply answers the command's message.
	run func(h *Host, ctx context.Context, in *inbound, reply func(string))
}

// commands returns the table of commands, in menu order.
func commands() []command {
	return []command{
		{name: "start", menu: "what this bot is", run: func(_ *Host, _ context.Context, _ *inbound, reply func(string)) { reply(startText) }},
		{name: "help", menu: "the commands", run: func(_ *Host, _ context.Context, _ *inbound, reply func(string)) { reply(helpText()) }},
		{name: "new", menu: "start a fresh session (the old one is kept)",
			help: "start a fresh session (the old conversation is kept on disk)", run: (*Host).newCommand},
		{name: "stop", menu: "stop the running turn, drop queued messages",
			help: "stop the running turn and its processes, drop queued messages", run: (*Host).stopCommand},
		{name: "status", menu: "model, context use, what is running, time zone",
			help: "model, session size, context use, what is running and queued, time zone", run: (*Host).statusCommand},
		{name: "usage", menu: "tokens and cost: this turn, session, today, 30 days",
			help: "tokens (and cost) of the last turn, the session, today and the last 30 days", run: (*Host).usageCommand},
		{name: "compact", menu: "summarise older messages now to free context",
			help: "summarise the older messages now, to free context", run: (*Host).compactCommand},
		{name: "model", args: "[name]", menu: "show or switch this chat's model: /model <name>",
			help: "show the models, or switch this chat to one", run: (*Host).modelCommand},
		{name: "tz", args: "<zone>", menu: "set this chat's time zone: /tz Europe/Berlin",
			help: "set this chat's time zone, e.g. /tz Europe/Berlin", run: (*Host).tzCommand},
		{name: "jobs", menu: "scheduled jobs, with cancel buttons",
			help: "scheduled jobs, with cancel buttons", run: (*Host).jobsCommand},
		{name: "retry", menu: "run again every message or scheduled job a restart interrupted",
			help: "run again every message or scheduled job a restart interrupted", run: (*Host).retryCommand},
		{name: "verbose", menu: "list every tool call, or fold them (toggle)",
			help: "list every tool call of a turn, or fold them into one line (a toggle)", run: (*Host).verboseCommand},
		{name: "approve", menu: "allow the waiting approval request once",
			help: "allow the oldest waiting approval request once (as its Allow once button)", run: (*Host).approveCommand},
		{name: "deny", menu: "deny the waiting approval request",
			help: "deny the oldest waiting approval request (as its Deny button)", run: (*Host).denyCommand},
		{name: "approvals", menu: "what is always allowed here, with revoke buttons",
			help: "the approval rules always allowed in this chat, with revoke buttons", run: (*Host).approvalsCommand},
	}
}

// botCommands returns the menu registered with setMyCommands.
func botCommands() []models.BotCommand {
	var out []models.BotCommand
	for _, c := range commands() {
		out = append(out, models.BotCommand{Command: c.name, Description: c.menu})
	}
	return out
}

// helpIntro opens /help; the commands' lines follow.
const helpIntro = `I am an AI agent: I answer your messages and can run commands, read and write files in my workspace, and schedule jobs.

Send text, voice notes, photos or files.
`

// helpText is the answer to /help: what the bot is, and a line per command.
func helpText() string {
	var b strings.Builder
	b.WriteString(helpIntro)
	for _, c := range commands() {
		if c.help == "" {
			continue
		}
		b.WriteString("\n/" + c.name)
		if c.args != "" {
			b.WriteString(" " + c.args)
		}
		b.WriteString(" — " + c.help)
	}
	return b.String()
}

const startText = `Hi! I'm your agent: an AI that answers your messages and can run commands, read and write files in its workspace, and schedule jobs for you.

Just write what you need, in your own words; you can also send voice notes, photos and files. While I work you see what I run, with a Stop button.

/new starts a fresh conversation, /stop stops me, /status shows what I'm doing, and /help lists every command.`

// handleCommand runs a command from the table; any other gets "Unknown
// command". Replies go out off the polling goroutine (see post).
func (h *Host) handleCommand(ctx context.Context, in *inbound) {
	reply := h.replyFunc(in)
	for _, c := range commands() {
		if c.name == in.command {
			c.run(h, ctx, in, reply)
			return
		}
	}
	reply("Unknown command. /help lists what I understand.")
}

// replyFunc returns how the handler of in replies to its chat: a notice,
// or, when in is journaled received, a report (sent again while Telegram
// fails it for a passing reason) that in's journal entry waits for.
func (h *Host) replyFunc(in *inbound) func(string) {
	if in.replies == nil {
		return func(text string) { h.notice(in.target, text, in.msg.ID) }
	}
	return func(text string) {
		in.replies.add()
		h.report(in.target, text, in.msg.ID, nil, in.replies.sent)
	}
}

func (h *Host) newCommand(_ context.Context, in *inbound, reply func(string)) {
	h.queueCommand(in, itemNew, reply, "⏳ A new session will start after the current turn (/stop ends that turn now).")
}

func (h *Host) stopCommand(_ context.Context, in *inbound, reply func(string)) {
	msg, r := h.stopChat(in.target, "")
	if len(r.droppedIDs) == 0 {
		reply(msg)
		return
	}
	// The answer is all the chat is told about the messages dropped.
	h.report(in.target, msg, in.msg.ID, nil, func() { h.journalDone(r.droppedIDs...) })
}

func (h *Host) statusCommand(ctx context.Context, in *inbound, reply func(string)) {
	reply(h.status(ctx, in.target))
}

func (h *Host) compactCommand(_ context.Context, in *inbound, reply func(string)) {
	h.queueCommand(in, itemCompact, reply, "⏳ The conversation will be compacted after the current turn.")
}

func (h *Host) tzCommand(ctx context.Context, in *inbound, reply func(string)) {
	reply(h.setTimeZone(ctx, in.target, in.args))
}

func (h *Host) jobsCommand(_ context.Context, in *inbound, _ func(string)) {
	t := in.target
	h.post(t, func(ctx context.Context) { h.listJobs(ctx, t, in.msg.ID) })
}

// queueCommand queues a command that runs in order with t's turns; the
// user is told waiting when it has to wait.
func (h *Host) queueCommand(in *inbound, kind itemKind, reply func(string), waiting string) {
	w, err := h.worker(in.target)
	if err != nil {
		return // shutting down
	}
	// The command's journal entry is done by the item once it ran: it
	// waits in memory only, and a restart before would forget it after
	// the chat was told it comes.
	waits, queued, err := w.enqueue(&workItem{kind: kind, origin: ledger.Update(in.updateID), state: ledger.Received})
	switch {
	case err != nil:
		reply(busyText(queued))
	case waits:
		in.deferred = true
		reply(waiting)
	default:
		in.deferred = true
	}
}

// nothingRunning is /stop's answer when there was nothing to stop.
const nothingRunning = "Nothing is running."

// staleStop is the answer to a Stop button whose turn has ended.
const staleStop = "That turn already ended."

// stopChat cancels t's running item and drops its queued messages; a
// queued /new or /compact still runs, next. A Stop button's turnID limits
// it to that turn: when another one runs, or none, it does nothing and
// says that turn already ended. It returns what to tell the user and what
// was stopped or dropped: the caller marks the dropped messages done once
// the chat was told.
func (h *Host) stopChat(t target, turnID string) (string, stopResult) {
	w := h.existingWorker(t)
	if w == nil {
		if turnID != "" {
			return staleStop, stopResult{stale: true}
		}
		return nothingRunning, stopResult{}
	}
	r := w.stop(turnID)
	if r.stale {
		return staleStop, r
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
		return nothingRunning, r
	}
	return strings.Join(parts, " "), r
}

// elapsed words how long something has run, to the second: "12s",
// "3m 05s", "1h 02m".
func elapsed(d time.Duration) string {
	d = d.Round(time.Second)
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm %02ds", int(d/time.Minute), int(d%time.Minute/time.Second))
	}
	return fmt.Sprintf("%dh %02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// status describes t's session and worker.
func (h *Host) status(ctx context.Context, t target) string {
	var b strings.Builder
	model, messages, usage := h.cfg.Model, 0, ""
	if s, err := h.session(ctx, t); err == nil {
		model, messages = s.Model(), len(s.Messages())
		usage = contextLines(s.ContextUsage(), h.location(t.String())) + "\n"
	}
	usage += h.sessionUsageLine(t)
	fmt.Fprintf(&b, "Model: %s\nSession: %s (%s)\n%s", model, h.sessionLabel(t), counted(messages, "message", "messages"), usage)
	running, queued := (*workItem)(nil), 0
	var tool toolActivity
	var inTool bool
	if w := h.existingWorker(t); w != nil {
		running, queued = w.snapshot()
		tool, inTool = w.activity()
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
	if inTool {
		what := tool.name
		if tool.arg != "" {
			what += ": " + tool.arg
		}
		fmt.Fprintf(&b, "Tool: %s, for %s\n", what, elapsed(time.Since(tool.since)))
	}
	fmt.Fprintf(&b, "Queued: %d\n", queued)
	zone := h.TimeZone(t.String())
	if zone == "" {
		zone = "the host's (" + time.Now().Format("MST") + ")"
	}
	fmt.Fprintf(&b, "Time zone: %s", zone)
	if h.statusLines != nil {
		for _, l := range h.statusLines() {
			b.WriteString("\n" + l)
		}
	}
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
		return fmt.Sprintf("%q is not an IANA time zone. Use a name such as Europe/Berlin, America/New_York, Asia/Tokyo or UTC.", h.shortened(arg, 60))
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

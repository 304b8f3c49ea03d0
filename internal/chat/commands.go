package chat

import (
	"context"
	"log/slog"
	"strings"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/chat/ledger"
)

// commander runs the bot commands and the button presses. It holds the
// concerns they act on, each with its own few dependencies, and reaches
// the chats only through outlet and chatQueues, not the host.
type commander struct {
	sessions *sessions
	models   *modelSwitch
	meter    *meter
	jobs     *jobsView
	// approvals has the approval commands and buttons.
	approvals *chatApprovals
	queues    chatQueues
	out       outlet
	// host has the handlers that live with their concern on the host.
	host   hostHandlers
	logger *slog.Logger
	// statusLines, when set, adds lines to /status (WithStatusLines).
	statusLines func() []string
}

// chatQueues is the chats' workers and the journal their items are done
// in; *Host provides it (queue.go).
type chatQueues interface {
	worker(t target) (*chatWorker, error)
	existingWorker(t target) *chatWorker
	journalDone(origins ...ledger.Origin)
}

// hostHandlers are the commands whose handlers live with their concern on
// the host: /retry (retry.go).
type hostHandlers interface {
	retryCommand(ctx context.Context, in *inbound, reply func(string))
}

// handler carries a command out; reply answers the command's message.
type handler = func(ctx context.Context, in *inbound, reply func(string))

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
	// run picks the command's handler from the commander.
	run func(c *commander) handler
}

// commands returns the table of commands, in menu order.
func commands() []command {
	return []command{
		{name: "start", menu: "what this bot is", run: answers(func() string { return startText })},
		{name: "help", menu: "the commands", run: answers(helpText)},
		{name: "new", menu: "start a fresh session (the old one is kept)",
			help: "start a fresh session (the old conversation is kept on disk)", run: func(c *commander) handler { return c.newCommand }},
		{name: "stop", menu: "stop the running turn, drop queued messages",
			help: "stop the running turn and its processes, drop queued messages", run: func(c *commander) handler { return c.stopCommand }},
		{name: "status", menu: "model, context use, what is running, time zone",
			help: "model, session size, context use, what is running and queued, time zone", run: func(c *commander) handler { return c.statusCommand }},
		{name: "usage", menu: "tokens and cost: this turn, session, today, 30 days",
			help: "tokens (and cost) of the last turn, the session, today and the last 30 days", run: func(c *commander) handler { return c.meter.command }},
		{name: "compact", menu: "summarise older messages now to free context",
			help: "summarise the older messages now, to free context", run: func(c *commander) handler { return c.compactCommand }},
		{name: "model", args: "[name]", menu: "show or switch this chat's model: /model <name>",
			help: "show the models, or switch this chat to one", run: func(c *commander) handler { return c.models.command }},
		{name: "tz", args: "<zone>", menu: "set this chat's time zone: /tz Europe/Berlin",
			help: "set this chat's time zone, e.g. /tz Europe/Berlin", run: func(c *commander) handler { return c.tzCommand }},
		{name: "jobs", menu: "scheduled jobs, with cancel buttons",
			help: "scheduled jobs, with cancel buttons", run: func(c *commander) handler { return c.jobs.command }},
		{name: "retry", menu: "run again every message or scheduled job a restart interrupted",
			help: "run again every message or scheduled job a restart interrupted", run: func(c *commander) handler { return c.host.retryCommand }},
		{name: "verbose", menu: "list every tool call, or fold them (toggle)",
			help: "list every tool call of a turn, or fold them into one line (a toggle)", run: func(c *commander) handler { return c.verboseCommand }},
		{name: "approve", menu: "allow the waiting approval request once",
			help: "allow the oldest waiting approval request once (as its Allow once button)", run: func(c *commander) handler { return c.approvals.approveCommand }},
		{name: "deny", menu: "deny the waiting approval request",
			help: "deny the oldest waiting approval request (as its Deny button)", run: func(c *commander) handler { return c.approvals.denyCommand }},
		{name: "approvals", menu: "what is always allowed here, with revoke buttons",
			help: "the approval rules always allowed in this chat, with revoke buttons", run: func(c *commander) handler { return c.approvals.approvalsCommand }},
	}
}

// answers is the handler of a command whose answer is a fixed text.
func answers(text func() string) func(*commander) handler {
	return func(*commander) handler {
		return func(_ context.Context, _ *inbound, reply func(string)) { reply(text()) }
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

// handle runs a command from the table; any other gets "Unknown command".
// Replies go out off the polling goroutine (see outlet.post).
func (c *commander) handle(ctx context.Context, in *inbound) {
	reply := c.reply(in)
	for _, cmd := range commands() {
		if cmd.name == in.command {
			cmd.run(c)(ctx, in, reply)
			return
		}
	}
	reply("Unknown command. /help lists what I understand.")
}

// reply returns how the handler of in replies to its chat: a notice, or,
// when in is journaled received, a report (sent again while Telegram
// fails it for a passing reason) that in's journal entry waits for.
func (c *commander) reply(in *inbound) func(string) {
	if in.replies == nil {
		return func(text string) { c.out.notice(in.target, text, in.msg.ID) }
	}
	return func(text string) {
		in.replies.add()
		c.out.report(in.target, text, in.msg.ID, nil, in.replies.sent)
	}
}

func (c *commander) newCommand(_ context.Context, in *inbound, reply func(string)) {
	c.queue(in, itemNew, reply, "⏳ A new session will start after the current turn (/stop ends that turn now).")
}

func (c *commander) compactCommand(_ context.Context, in *inbound, reply func(string)) {
	c.queue(in, itemCompact, reply, "⏳ The conversation will be compacted after the current turn.")
}

// queue queues a command that runs in order with t's turns; the user is
// told waiting when it has to wait.
func (c *commander) queue(in *inbound, kind itemKind, reply func(string), waiting string) {
	w, err := c.queues.worker(in.target)
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

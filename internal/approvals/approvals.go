package approvals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/redactor"
	"github.com/volcanic/telegram-agent/internal/storagefail"
)

// Name is the extension's name.
const Name = "approvals"

// Extension asks the chat before the tool calls its mode and rules select,
// through the tool_call event: a call runs only once it is allowed, and a
// denied one gets a result that says so. Register it last, so that it sees
// the arguments after every other extension's handlers.
type Extension struct {
	cfg    config
	red    *redactor.Redactor
	logger *slog.Logger
}

// chat is what the extension needs of a turn's front end: it asks there
// and keeps that chat's "Always in this chat" decisions.
type chat interface {
	Asker
	DecisionStore
}

// New returns the extension. It asks through the front end each turn is
// prompted with ([agent.FrontEnd]), which must be an [Asker] and a
// [DecisionStore]: the chat host is built after the agent, so it cannot be
// handed to the extension here.
func New(opts ...Option) *Extension {
	cfg := config{timeout: DefaultTimeout}
	for _, o := range opts {
		o(&cfg)
	}
	return &Extension{cfg: cfg}
}

// Name returns "approvals".
func (e *Extension) Name() string { return Name }

// Mode returns the mode the extension runs in.
func (e *Extension) Mode() Mode { return e.cfg.mode }

// Activate adds the tool_call handler, unless the mode is off.
func (e *Extension) Activate(_ context.Context, api *agent.API) error {
	e.red = api.Redactor()
	e.logger = api.Logger()
	if e.cfg.mode == ModeOff {
		return nil
	}
	api.OnToolCall(e.onToolCall)
	return nil
}

// shownLength is how many characters of a command the chat is shown.
const shownLength = 600

// onToolCall decides one call: it runs when no rule matches or the chat
// always allows every rule it matches, else it waits for the chat's answer.
// A turn whose front end cannot ask (none, or not an asker) has no chat to
// ask in: it is denied without asking, as a scheduled job's turn is.
func (e *Extension) onToolCall(ctx context.Context, ev *agent.ToolCallEvent) error {
	tc := ev.Context
	var scope, session, workspace string
	if tc != nil {
		scope, session, workspace = tc.Scope, tc.SessionID, tc.Workspace
	}
	shown, ids := e.assess(ev.ToolName, ev.Effects, ev.Arguments, workspace)
	front, _ := agent.FrontEnd(ctx).(chat)
	var rules []Rule
	for _, id := range ids {
		if front == nil || !front.AlwaysAllowed(ctx, scope, id) {
			rules = append(rules, Describe(id))
		}
	}
	if len(rules) == 0 {
		return nil
	}
	req := Request{
		Scope: scope, SessionID: session, CallID: ev.CallID, Tool: ev.ToolName,
		Command: shorten(e.red.Redact(shown), shownLength), Rules: rules, Timeout: e.cfg.timeout,
	}
	log := e.logger.With("scope", scope, "session", session, "tool", ev.ToolName, "rules", ruleIDs(rules))
	what := fmt.Sprintf("%s (%s)", req.Command, describeAll(rules))
	if why := unattended(ctx, front); why != "" {
		log.Info("approvals: denied without asking: nobody watches this turn")
		ev.Block("Not run: " + what + " needs the user's approval, and " + why + ", so there was nobody to ask. Say in your answer that it was not run and why; the user can ask for it in the chat.")
		return nil
	}
	askCtx, cancel := context.WithTimeout(ctx, e.cfg.timeout)
	defer cancel()
	d, err := front.Ask(askCtx, req)
	switch {
	case ctx.Err() != nil:
		log.Info("approvals: the turn was stopped while waiting")
		ev.Block("Not run: the turn was stopped while " + what + " waited for the user's approval.")
	case errors.Is(askCtx.Err(), context.DeadlineExceeded):
		log.Info("approvals: no answer in time, denied", "timeout", e.cfg.timeout)
		ev.Block(fmt.Sprintf("Not run: the user did not answer the approval request for %s within %s, which counts as a denial. Do not try it another way; ask the user.", what, e.cfg.timeout))
	case err != nil:
		log.Warn("approvals: asking failed, denied", "err", err)
		ev.Block(fmt.Sprintf("Not run: the approval request for %s could not be sent (%v), which counts as a denial.", what, err))
	case d == AllowAlways:
		for _, r := range rules {
			err := front.AllowAlways(ctx, scope, r.ID)
			switch {
			case err != nil && storagefail.Is(err):
				// The store's writer logs a disk that refuses writes once
				// per episode; the asker told the chat.
				log.Debug("approvals: keeping the decision failed on a full disk; allowed this once", "rule", r.ID, "err", err)
			case err != nil:
				log.Warn("approvals: keeping the decision failed; allowed this once", "rule", r.ID, "err", err)
			}
		}
		log.Info("approvals: allowed, always in this chat")
	case d == AllowOnce:
		log.Info("approvals: allowed once")
	default:
		log.Info("approvals: denied by the user")
		ev.Block("Not run: the user denied: " + what + ". Do not try it another way; ask the user what to do instead.")
	}
	return nil
}

// assess returns what the call does, as the chat is shown it, and the IDs
// of the rules it matches. It goes by what the tool declared of its
// effects, never by its name, so a renamed tool is asked about as before:
// the command it runs is assessed with the shell rules, the path it
// writes against the writable roots, and in ModeAll every tool not
// declared read-only is asked about. A deferred command (a watcher's
// script, run later) is assessed when the call that keeps it is made.
func (e *Extension) assess(tool string, fx agent.Effects, raw json.RawMessage, workspace string) (string, []string) {
	var ids []string
	shown := tool + " " + string(raw)
	if fx.WritesPath != "" {
		p, ok := stringArgument(raw, fx.WritesPath)
		if !ok || outsideView(workspace, e.cfg.writable, p) {
			ids = append(ids, RuleWriteOutsideView)
		}
		shown = tool + " " + p
	}
	if fx.Command != "" {
		command, ok := stringArgument(raw, fx.Command)
		switch {
		case !ok:
			ids = append(ids, RuleUnparsable)
		case fx.Deferred && command != "":
			// A deferred command (a watcher's script) runs later, in no
			// turn and with no tool call of its own: it is assessed now,
			// so it is asked about in the chat that creates it and denied
			// in a scheduled job's own turn.
			shown = tool + " " + fx.Command + ": " + command
			ids = append(ids, assessCommand(command, e.cfg.custom)...)
		case !fx.Deferred:
			shown = command
			ids = append(ids, assessCommand(command, e.cfg.custom)...)
		}
	}
	if e.cfg.mode == ModeAll && !fx.ReadOnly {
		ids = append(ids, toolPrefix+tool)
	}
	return shown, ids
}

// ruleIDs lists the rules' IDs, for logs.
func ruleIDs(rules []Rule) []string {
	ids := make([]string, len(rules))
	for i, r := range rules {
		ids[i] = r.ID
	}
	return ids
}

// describeAll joins the rules' descriptions.
func describeAll(rules []Rule) string {
	parts := make([]string, len(rules))
	for i, r := range rules {
		parts[i] = r.Description
	}
	return strings.Join(parts, "; ")
}

// shorten cuts s to at most max characters, keeping its beginning and its
// end (where a risky part often stands) around a note of how many
// characters it leaves out: a command can hide its risky part in the
// middle, behind a harmless beginning that matches the same rule, and
// whoever is asked must see that something is not shown.
func shorten(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	note := func(n int) string { return fmt.Sprintf(" … [%d characters not shown] … ", n) }
	// The note's length depends on the count it names: take the longest.
	keep := max - len([]rune(note(len(r))))
	head := keep * 2 / 3
	tail := keep - head
	return string(r[:head]) + note(len(r)-head-tail) + string(r[len(r)-tail:])
}

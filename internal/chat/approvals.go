package chat

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/approvals"
	"github.com/volcanic/telegram-agent/internal/chat/turnview"
	"github.com/volcanic/telegram-agent/internal/storagefail"
)

// The kinds of the approval buttons' callback data.
const (
	// callbackApproval is an answer to an approval request:
	// "approve:<request id>:<once|always|deny>".
	callbackApproval = "approve"
	// callbackRevoke revokes an "always" decision in /approvals:
	// "revoke:<rule hash>".
	callbackRevoke = "revoke"
)

// The answers an approval request's buttons carry.
var approvalChoices = map[string]approvals.Decision{
	"once":   approvals.AllowOnce,
	"always": approvals.AllowAlways,
	"deny":   approvals.Deny,
}

// chatApprovals is the chat's side of the approvals extension, which finds
// it on each turn's front end (see frontEnd): it asks a chat about a call
// with the buttons, and keeps the chat's "always" answers in
// chat-settings.json (approvals.Asker and approvals.DecisionStore).
type chatApprovals struct {
	// view sends the requests: each is an Answer, its outcome one
	// within a Notice, behind the chat's other notices.
	view     *turnview.View
	settings *settingsStore
	// board is the host's: the commands and buttons here answer the
	// requests.
	board *approvalBoard
	// out answers the commands and buttons (/approvals, its revoke
	// buttons, a stale request's).
	out    outlet
	logger *slog.Logger
}

// Ask asks req's chat whether the call may run (approvals.Asker): a
// message with the command, the rules and the buttons Allow once, Always
// in this chat and Deny, and waits for a press until ctx ends (the
// approval timeout, or the turn stopped). The message is then edited to
// say how it ended, its buttons gone.
func (c *chatApprovals) Ask(ctx context.Context, req approvals.Request) (approvals.Decision, error) {
	t, err := turnChat(ctx, req.Scope)
	if err != nil {
		return approvals.Deny, err
	}
	// The turn's tool status goes out first, so that the request always
	// stands below the status line of the call it asks about.
	if o := turnview.TurnOf(ctx); o != nil {
		o.ShowStatus(ctx)
	}
	id, p := c.board.add(t)
	defer c.board.remove(id)
	text := approvalText(req)
	// The request goes out even when the turn is stopped while it is on
	// its way, so that it can then be marked as ended, not left with live
	// buttons.
	sendCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), turnview.NoticeTimeout)
	defer cancel()
	out := c.view.To(t.view())
	msgID, err := out.Answer(sendCtx, turnview.Message{Text: text, HTML: true, Buttons: approvalButtons(id)})
	if err != nil {
		return approvals.Deny, fmt.Errorf("chat: sending the approval request: %w", err)
	}
	var d approvals.Decision
	var outcome string
	select {
	case d = <-p.answer:
		outcome = map[approvals.Decision]string{
			approvals.AllowOnce:   "✅ Allowed once.",
			approvals.AllowAlways: "✅ Allowed, and always in this chat for these rules (/approvals to revoke).",
			approvals.Deny:        "🚫 Denied.",
		}[d]
		if d == approvals.AllowAlways {
			if note := c.keepAlways(t, req.Rules); note != "" {
				d, outcome = approvals.AllowOnce, "✅ Allowed once. "+note
			}
		}
	case <-ctx.Done():
		outcome = "⏹ The turn was stopped: denied."
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			outcome = "⌛ No answer in time: denied."
		}
	}
	out.Notice(func(ctx context.Context, _ turnview.Noticer) {
		// The outcome is an Answer: every try, within the notice's time.
		if _, err := out.Answer(ctx, turnview.Message{Edit: msgID, Text: text + "\n\n" + html.EscapeString(outcome), HTML: true}); err != nil {
			c.logger.Warn("the approval request was not updated", "scope", t.String(), "err", err)
		}
	})
	if ctx.Err() != nil {
		return approvals.Deny, ctx.Err()
	}
	return d, nil
}

// approvalText is the approval request's message, in HTML.
func approvalText(req approvals.Request) string {
	var b strings.Builder
	fmt.Fprintf(&b, "⚠️ <b>Approval needed</b> for %s:\n<pre>%s</pre>\n", html.EscapeString(req.Tool), html.EscapeString(req.Command))
	for _, r := range req.Rules {
		fmt.Fprintf(&b, "• %s\n", html.EscapeString(r.Description))
	}
	if req.Timeout > 0 {
		fmt.Fprintf(&b, "No answer within %s denies it.", approxDuration(req.Timeout))
	}
	return strings.TrimSpace(b.String())
}

// approvalButtons are the request's three buttons.
func approvalButtons(id string) *models.InlineKeyboardMarkup {
	data := func(choice string) string { return callbackApproval + ":" + id + ":" + choice }
	return &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{
		{{Text: "✅ Allow once", CallbackData: data("once")}, {Text: "♾ Always in this chat", CallbackData: data("always")}},
		{{Text: "🚫 Deny", CallbackData: data("deny")}},
	}}
}

// pressApproval handles an approval button: the answer goes to its
// waiting request; a request that no longer waits says so and loses its
// buttons.
func (c *chatApprovals) pressApproval(p press) {
	id, choice, _ := strings.Cut(p.arg, ":")
	d, known := approvalChoices[choice]
	if known && c.board.answer(id, p.target, d) {
		c.out.post(p.target, func(ctx context.Context, n turnview.Noticer) { p.answer(ctx, n, "") })
		return
	}
	t := p.target
	c.out.post(t, func(ctx context.Context, n turnview.Noticer) {
		p.answer(ctx, n, "This request is no longer waiting.")
		if err := c.out.removeButtons(ctx, t, p.msgID); err != nil {
			c.logger.Debug("removing a stale approval's buttons failed", "scope", t.String(), "err", err)
		}
	})
}

// approvalHint answers a message that would start a turn while an approval
// request of its chat waits: it is not queued (it would later run as a turn
// of its own, out of context).
const approvalHint = "⚠️ An approval request is waiting: press Allow or Deny above, or send /approve or /deny. This message was not sent to the agent."

// answerOldest answers the oldest approval request waiting in t with d
// (/approve, /deny).
func (c *chatApprovals) answerOldest(t target, d approvals.Decision, reply func(string)) {
	id := c.board.oldest(t)
	if id == "" || !c.board.answer(id, t, d) {
		reply("No approval request is waiting in this chat.")
		return
	}
	if d == approvals.Deny {
		reply("🚫 Denied.")
		return
	}
	reply("✅ Allowed once.")
}

func (c *chatApprovals) approveCommand(_ context.Context, in *inbound, reply func(string)) {
	c.answerOldest(in.target, approvals.AllowOnce, reply)
}

func (c *chatApprovals) denyCommand(_ context.Context, in *inbound, reply func(string)) {
	c.answerOldest(in.target, approvals.Deny, reply)
}

// AlwaysAllowed reports whether the chat scope allowed rule for good
// (approvals.DecisionStore); never for a scope that is not the chat of
// the turn ctx belongs to (see turnChat).
func (c *chatApprovals) AlwaysAllowed(ctx context.Context, scope, rule string) bool {
	if _, err := turnChat(ctx, scope); err != nil {
		return false
	}
	return c.allowed(scope, rule)
}

// AllowAlways keeps that the chat scope allows rule from now on
// (approvals.DecisionStore), for the chat of the turn ctx belongs to only
// (see turnChat).
func (c *chatApprovals) AllowAlways(ctx context.Context, scope, rule string) error {
	if _, err := turnChat(ctx, scope); err != nil {
		return err
	}
	return c.keep(scope, rule)
}

// allowed reports whether the chat scope allowed rule for good.
func (c *chatApprovals) allowed(scope, rule string) bool {
	return slices.Contains(c.settings.get(scope).Approvals, rule)
}

// keep keeps that the chat scope allows rule from now on, in
// chat-settings.json. A rule kept already is not written again: Ask keeps
// an "always" answer itself.
func (c *chatApprovals) keep(scope, rule string) error {
	if c.allowed(scope, rule) {
		return nil
	}
	return c.settings.update(scope, func(c *chatSettings) {
		if !slices.Contains(c.Approvals, rule) {
			c.Approvals = append(c.Approvals, rule)
			slices.Sort(c.Approvals)
		}
	})
}

// keepAlways keeps an "Always in this chat" answer for rules before the
// request says it is kept, and returns "" when it is, else what the
// request says instead: the call then runs once. A disk that refuses the
// write is logged once per episode by the settings' writer (see
// storageHealth), not here.
func (c *chatApprovals) keepAlways(t target, rules []approvals.Rule) string {
	for _, r := range rules {
		err := c.keep(t.String(), r.ID)
		switch {
		case err == nil:
			continue
		case storagefail.Is(err):
			return "\"Always\" could not be remembered: the bot's disk is full or cannot be written, so this will be asked about again."
		default:
			c.logger.Warn("keeping an approval failed; allowed this once", "scope", t.String(), "rule", r.ID, "err", err)
			return "\"Always\" could not be remembered: the chat settings could not be saved, so this will be asked about again."
		}
	}
	return ""
}

// ruleHash names a rule in a revoke button's callback data, which must
// stay within Telegram's 64 bytes whatever the rule (an operator's
// expression may be long).
func ruleHash(rule string) string {
	sum := sha256.Sum256([]byte(rule))
	return hex.EncodeToString(sum[:6])
}

// approvalsList is /approvals: the chat's "always" decisions, each with a
// revoke button.
func (c *chatApprovals) approvalsList(scope string) (string, *models.InlineKeyboardMarkup) {
	rules := c.settings.get(scope).Approvals
	if len(rules) == 0 {
		return "Nothing is always allowed in this chat: risky commands are asked about each time.", nil
	}
	var b strings.Builder
	b.WriteString("Always allowed in this chat:\n")
	var rows [][]models.InlineKeyboardButton
	for _, id := range rules {
		r := approvals.Describe(id)
		fmt.Fprintf(&b, "• %s\n", r.Description)
		rows = append(rows, []models.InlineKeyboardButton{{Text: "✖ Revoke " + c.out.shortened(r.Description, 40), CallbackData: callbackRevoke + ":" + ruleHash(id)}})
	}
	return strings.TrimSpace(b.String()), &models.InlineKeyboardMarkup{InlineKeyboard: rows}
}

// revokeApproval removes the chat's decision whose rule hashes to hash and
// reports whether there was one.
func (c *chatApprovals) revokeApproval(scope, hash string) (bool, error) {
	found := false
	err := c.settings.update(scope, func(c *chatSettings) {
		c.Approvals = slices.DeleteFunc(c.Approvals, func(id string) bool {
			if ruleHash(id) == hash {
				found = true
				return true
			}
			return false
		})
	})
	return found, err
}

// approxDuration words d for a person: "10 minutes", "90 seconds".
func approxDuration(d time.Duration) string {
	switch {
	case d >= time.Hour && d%time.Hour == 0:
		return counted(int(d/time.Hour), "hour", "hours")
	case d >= time.Minute && d%time.Minute == 0:
		return counted(int(d/time.Minute), "minute", "minutes")
	}
	return counted(int(d.Round(time.Second)/time.Second), "second", "seconds")
}

// approvalsCommand handles /approvals: the chat's "always" decisions, each
// with a revoke button.
func (c *chatApprovals) approvalsCommand(_ context.Context, in *inbound, _ func(string)) {
	t := in.target
	c.out.post(t, func(ctx context.Context, n turnview.Noticer) {
		text, buttons := c.approvalsList(t.String())
		menu{out: c.out}.send(ctx, n, t, "approvals", text, buttons, in.msg.ID)
	})
}

// pressRevoke handles a revoke button of /approvals: the decision goes,
// and the list is re-rendered in place.
func (c *chatApprovals) pressRevoke(p press) {
	t := p.target
	c.out.post(t, func(ctx context.Context, n turnview.Noticer) {
		found, err := c.revokeApproval(t.String(), p.arg)
		switch {
		case storagefail.Is(err):
			// The settings' writer logs the episode (see storageHealth).
			p.answer(ctx, n, "Could not revoke it: the bot's disk is full or cannot be written, so it stays allowed. Try again once the operator has freed space.")
		case err != nil:
			c.logger.Warn("revoking an approval failed", "scope", t.String(), "err", err)
			p.answer(ctx, n, "Could not revoke it: the settings were not saved, so it stays allowed.")
		case !found:
			p.answer(ctx, n, "That was revoked already.")
		default:
			p.answer(ctx, n, "Revoked: it will be asked about again.")
		}
		text, buttons := c.approvalsList(t.String())
		menu{out: c.out}.edit(ctx, n, t, "approvals edit", p.msgID, text, buttons)
	})
}

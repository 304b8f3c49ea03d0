package chat

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/chat/botapi"
)

// toolStatus is a turn's tool progress message: one line per tool call
// (the tool, its command or argument in short, how it ended), the running
// call's output tail, and a Stop button that names the turn; edited at
// most once per edit interval.
type toolStatus struct {
	h      *Host
	t      target
	turnID string
	// mode is ToolStatusAll or ToolStatusLast.
	mode string
	th   *throttle

	// pushMu is held by a push from reading msgID to recording it.
	pushMu sync.Mutex
	mu     sync.Mutex
	calls  []*toolLine
	msgID  int
	shown  string
	// notBefore holds running updates back after a 429 until its
	// retry_after.
	notBefore time.Time
}

// toolState is how a tool call stands.
type toolState int

const (
	toolRunning toolState = iota
	toolDone
	toolFailed
	// toolStopped: the call ended because the turn was cancelled (/stop,
	// the Stop button, a shutdown).
	toolStopped
)

type toolLine struct {
	id, name, arg, tail string
	state               toolState
	// why is a failed call's reason in short: "exit 3", or the error.
	why string
}

func (h *Host) newToolStatus(ctx context.Context, t target, turnID, mode string) *toolStatus {
	s := &toolStatus{h: h, t: t, turnID: turnID, mode: mode}
	s.th = newThrottle(ctx, h.editInterval, s.pushRunning)
	return s
}

func (s *toolStatus) start(id, name string, args json.RawMessage) {
	s.mu.Lock()
	// Redacted before it is shortened, so the cut cannot leave the start of
	// a secret the sender's pass would no longer recognise.
	s.calls = append(s.calls, &toolLine{id: id, name: name, arg: summarizeArgs(json.RawMessage(s.h.cfg.Redactor.Redact(string(args))))})
	s.mu.Unlock()
	s.th.kick()
}

func (s *toolStatus) line(id string) *toolLine {
	for i := len(s.calls) - 1; i >= 0; i-- {
		if s.calls[i].id == id {
			return s.calls[i]
		}
	}
	return nil
}

func (s *toolStatus) update(id, output string) {
	s.mu.Lock()
	if l := s.line(id); l != nil {
		l.tail = tail(output, 3, 300)
	}
	s.mu.Unlock()
	s.th.kick()
}

// end records how a call ended: res is its (redacted) result, cancelled
// says the turn was cancelled meanwhile.
func (s *toolStatus) end(id string, res *agent.Result, cancelled bool) {
	s.mu.Lock()
	if l := s.line(id); l != nil {
		l.state, l.tail, l.why = toolDone, "", ""
		switch {
		case res == nil || !res.IsError:
		case cancelled:
			l.state = toolStopped
		default:
			l.state = toolFailed
			l.why, l.tail = failureSummary(res)
		}
	}
	s.mu.Unlock()
	s.th.kick()
}

// failureSummary returns a failed call's reason in short ("exit 3", or
// empty when the output says it) and one line of its output: the last
// line the command printed, or the error's first line.
func failureSummary(res *agent.Result) (why, line string) {
	text := agent.TextOf(res.Content)
	if code, ok := agent.ExitCode(res.Details); ok {
		if code > 0 {
			why = "exit " + strconv.Itoa(code)
		}
		// The last line of the output, without the tool's own [notes].
		lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
		for i := len(lines) - 1; i >= 0; i-- {
			l := strings.TrimSpace(lines[i])
			if l == "" || l == "(no output)" || (strings.HasPrefix(l, "[") && strings.HasSuffix(l, "]")) {
				continue
			}
			return why, shorten(l, 100)
		}
		return why, ""
	}
	first, _, _ := strings.Cut(strings.TrimSpace(text), "\n")
	return "", shorten(first, 100)
}

// render returns the status text; stopped marks the calls still running as
// stopped, and is the final form. In the last mode the final form of a turn
// whose calls all ended well is one folded line (a failure or a stop stays
// call by call), and while the turn runs only the latest call is shown,
// after a count of the ones before it.
func (s *toolStatus) render(stopped bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	calls := s.calls
	var b strings.Builder
	if s.mode == ToolStatusLast && len(calls) > 0 {
		if stopped && allDone(calls) {
			return preview(foldedStatus(calls))
		}
		if n := len(calls) - 1; !stopped && n > 0 {
			fmt.Fprintf(&b, "(%s before)\n", counted(n, "tool call", "tool calls"))
			calls = calls[n:]
		}
	}
	for _, l := range calls {
		icon, note := "⏳", ""
		switch {
		case l.state == toolFailed:
			icon = "❌"
		case l.state == toolDone:
			icon = "✅"
		case l.state == toolStopped, stopped:
			icon, note = "⏹", " (stopped)"
		}
		b.WriteString(icon + " " + l.name)
		if l.why != "" {
			b.WriteString(" (" + l.why + ")")
		}
		if l.arg != "" {
			b.WriteString(": " + l.arg)
		}
		b.WriteString(note)
		b.WriteByte('\n')
		if (l.state == toolRunning || l.state == toolFailed) && l.tail != "" {
			b.WriteString(indent(l.tail))
		}
	}
	return preview(strings.TrimRight(b.String(), "\n"))
}

// pushRunning shows the running state, with the Stop button: one try. An
// update Telegram does not take is skipped (the next one replaces it), and
// after a 429 none is tried before its retry_after.
func (s *toolStatus) pushRunning(ctx context.Context) {
	s.mu.Lock()
	notBefore := s.notBefore
	s.mu.Unlock()
	if time.Now().Before(notBefore) {
		return
	}
	ctx, cancel := statusSendContext(ctx)
	defer cancel()
	err := s.push(ctx, s.h.preview, true)
	if err == nil {
		return
	}
	if botapi.ClassOf(err) == botapi.RateLimited {
		s.mu.Lock()
		s.notBefore = time.Now().Add(botapi.RetryAfter(err))
		s.mu.Unlock()
	}
	s.h.logSkipped("tool status", s.t, err)
}

// show sends the running status now when it was not shown yet, under the
// retry policy (a retry_after is waited out) for at most statusSendTimeout:
// what follows it in the chat must come after it, which a preview's one
// try dropped under a 429 would not keep.
func (s *toolStatus) show(ctx context.Context) { s.pushFirst(ctx, s.h.api, true) }

// pushFirst sends the status through send when it was not shown yet,
// within statusSendContext; running says whether the Stop button is shown.
func (s *toolStatus) pushFirst(ctx context.Context, send *botapi.Client, running bool) {
	s.mu.Lock()
	shown := s.msgID != 0
	s.mu.Unlock()
	if shown {
		return
	}
	ctx, cancel := statusSendContext(ctx)
	defer cancel()
	if err := s.push(ctx, send, running); err != nil {
		s.h.logSkipped("tool status", s.t, err)
	}
}

// push sends or edits the status message through send; running says
// whether the Stop button is shown. Pushes take turns (pushMu): the
// throttle's and an approval request's (see show) could otherwise both
// send a first message.
func (s *toolStatus) push(ctx context.Context, send *botapi.Client, running bool) error {
	s.pushMu.Lock()
	defer s.pushMu.Unlock()
	text := s.render(!running)
	markup := noButtons()
	if running {
		markup = &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{{Text: "⏹ Stop", CallbackData: callbackStop + ":" + s.turnID}}}}
	}
	s.mu.Lock()
	msgID, shown := s.msgID, s.shown
	s.mu.Unlock()
	if text == "" || (text == shown && running) {
		return nil
	}
	if msgID == 0 {
		p := s.h.messageParams(s.t, text, "", 0)
		p.Buttons = markup
		p.Silent = true
		m, err := send.SendMessage(ctx, p)
		if err != nil {
			return err
		}
		msgID = m.ID
	} else if _, err := send.EditMessageText(ctx, botapi.Edit{ChatID: s.t.chatID, MessageID: msgID, Text: text, Buttons: markup}); err != nil {
		return err
	}
	s.mu.Lock()
	s.msgID, s.shown = msgID, text
	s.mu.Unlock()
	if running {
		s.h.statuses.shown(s.t, msgID, text)
	} else {
		s.h.statuses.closed(msgID)
	}
	return nil
}

// noButtons is an empty inline keyboard: it removes a message's buttons.
func noButtons() *models.InlineKeyboardMarkup {
	return &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{}}
}

// statusSendTimeout bounds one send or edit of the status message while
// the turn runs, and its first send at the end.
const statusSendTimeout = 10 * time.Second

// statusSendContext is the context of one status send while the turn runs:
// it does not die with the turn (a Stop that cancels the turn while the
// first send is in flight would otherwise lose the message's id, and the
// final state would go out as a second status message), and it is bounded
// by statusSendTimeout.
func statusSendContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), statusSendTimeout)
}

// settle ends the running updates; stopped marks the calls still running
// as stopped. A status message never shown yet goes out now, in its final
// form and with one try, so that it comes before the answer; one already
// shown is finalised by close, after the answer.
func (s *toolStatus) settle(ctx context.Context, stopped bool) {
	s.th.stop()
	s.mu.Lock()
	if stopped {
		for _, l := range s.calls {
			if l.state == toolRunning {
				l.state, l.tail = toolStopped, ""
			}
		}
	}
	s.mu.Unlock()
	s.pushFirst(ctx, s.h.preview, false)
}

// close shows the final state of a status message already shown, without
// the Stop button, under the retry policy (a retry_after is waited out)
// until ctx ends. When that edit fails for good it removes the button at
// least; were even that lost, the button would stop nothing (see
// stopChat).
func (s *toolStatus) close(ctx context.Context) {
	s.mu.Lock()
	msgID := s.msgID
	s.mu.Unlock()
	if msgID == 0 {
		return
	}
	err := s.push(ctx, s.h.api, false)
	if err == nil {
		return
	}
	log := s.h.logger.With("scope", s.t.String(), "err", err)
	if ctx.Err() != nil {
		log.Warn("the tool status message was not finalised in time; its Stop button stays and stops nothing")
		return
	}
	if err := s.h.removeButtons(ctx, s.t, msgID); err != nil {
		log.Warn("the tool status message was not finalised; its Stop button stays and stops nothing", "remove_err", err)
		return
	}
	s.h.statuses.closed(msgID)
	log.Warn("the tool status message was not finalised; its Stop button was removed")
}

// closeStatus finalises a turn's status message in the background, so that
// its retries never hold up the answer: bounded by finishTimeout, given up
// shortly after a shutdown begins. It must be called on a worker's
// goroutine: the closing goroutine joins the workers, which the shutdown
// waits for.
func (h *Host) closeStatus(st *toolStatus) {
	h.workers.Go(func() {
		ctx, cancel := h.finishContext(context.Background())
		defer cancel()
		st.close(ctx)
	})
}

// removeButtons removes the inline buttons of the message msgID: one try.
func (h *Host) removeButtons(ctx context.Context, t target, msgID int) error {
	return h.preview.EditMessageReplyMarkup(ctx, t.chatID, msgID, noButtons())
}

// summarizeArgs returns a tool call's command or main argument in short.
func summarizeArgs(args json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(args, &m) != nil {
		return ""
	}
	for _, key := range []string{"command", "path", "schedule", "id", "url", "query"} {
		if v, ok := m[key].(string); ok && v != "" {
			return shorten(v, 80)
		}
	}
	for _, v := range m {
		if s, ok := v.(string); ok && s != "" {
			return shorten(s, 80)
		}
	}
	return ""
}

// shorten returns s on one line, at most n runes.
func shorten(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// shortened is shorten of s redacted whole first, for a text the agent or
// a user could write (a job's name, an approval rule, a command's
// argument): a cut can leave a part of a secret's encoded form, which the
// sender's redaction of the message no longer recognises as one.
func (h *Host) shortened(s string, n int) string {
	return shorten(h.cfg.Redactor.Redact(s), n)
}

// tail returns the last lines of s, at most n runes.
func tail(s string, lines, n int) string {
	s = strings.TrimRight(s, "\n")
	parts := strings.Split(s, "\n")
	if len(parts) > lines {
		parts = parts[len(parts)-lines:]
	}
	out := strings.Join(parts, "\n")
	if r := []rune(out); len(r) > n {
		out = "…" + string(r[len(r)-n+1:])
	}
	return out
}

func indent(s string) string {
	var b strings.Builder
	for _, line := range strings.Split(s, "\n") {
		b.WriteString("   " + line + "\n")
	}
	return b.String()
}

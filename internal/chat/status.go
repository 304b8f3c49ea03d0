package chat

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// CallbackStop is the callback data of the Stop button under a tool status
// message.
const CallbackStop = "stop"

// toolStatus is a turn's tool progress message: one line per tool call
// (the tool, its command or argument in short, how it ended), the running
// call's output tail, and a Stop button; edited at most once per edit
// interval.
type toolStatus struct {
	h  *Host
	t  target
	th *throttle

	mu    sync.Mutex
	calls []*toolLine
	msgID int
	shown string
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

func (h *Host) newToolStatus(ctx context.Context, t target) *toolStatus {
	s := &toolStatus{h: h, t: t}
	s.th = newThrottle(ctx, h.editInterval, func(ctx context.Context) { s.push(ctx, true) })
	return s
}

func (s *toolStatus) start(id, name string, args json.RawMessage) {
	s.mu.Lock()
	s.calls = append(s.calls, &toolLine{id: id, name: name, arg: summarizeArgs(args)})
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
	if code, ok := exitCode(res.Details); ok {
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

// exitCode reads a bash result's exit code from its details.
func exitCode(details map[string]any) (int, bool) {
	switch v := details["exit_code"].(type) {
	case int:
		return v, true
	case int64:
		return int(v), true
	case float64:
		return int(v), true
	}
	return 0, false
}

// render returns the status text; stopped marks the calls still running as
// stopped.
func (s *toolStatus) render(stopped bool) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, l := range s.calls {
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

// push sends or edits the status message; running says whether the Stop
// button is shown.
func (s *toolStatus) push(ctx context.Context, running bool) {
	// The send must not die with the turn: a Stop that cancels the turn
	// while the first send is in flight would otherwise lose the message's
	// id, and the final state would go out as a second status message.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), statusSendTimeout)
	defer cancel()
	send := s.h.send
	if running {
		send = s.h.preview
	}
	text := s.render(!running)
	var markup models.ReplyMarkup = &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{}}
	if running {
		markup = &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{{Text: "⏹ Stop", CallbackData: CallbackStop}}}}
	}
	s.mu.Lock()
	msgID, shown := s.msgID, s.shown
	s.mu.Unlock()
	if text == "" || (text == shown && running) {
		return
	}
	if msgID == 0 {
		p := s.h.messageParams(s.t, text, "", 0)
		p.ReplyMarkup = markup
		p.DisableNotification = true
		m, err := send.SendMessage(ctx, p)
		if err != nil {
			s.h.logSendError("tool status", s.t, err)
			return
		}
		msgID = m.ID
	} else if _, err := send.EditMessageText(ctx, &bot.EditMessageTextParams{ChatID: s.t.chatID, MessageID: msgID, Text: text, ReplyMarkup: markup}); err != nil {
		s.h.logSendError("tool status edit", s.t, err)
		return
	}
	s.mu.Lock()
	s.msgID, s.shown = msgID, text
	s.mu.Unlock()
}

// statusSendTimeout bounds one send or edit of the status message.
const statusSendTimeout = 10 * time.Second

// finish shows the final state without the Stop button.
func (s *toolStatus) finish(ctx context.Context, stopped bool) {
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
	s.push(ctx, false)
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

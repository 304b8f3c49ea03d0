package turnview

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// toolStatus is a turn's tool progress message: one line per tool call
// (the tool, its command or argument in short, how it ended), the running
// call's output tail, and a Stop button; edited at most once per edit
// interval.
type toolStatus struct {
	o Outlet
	// stopData is the Stop button's callback data, which names the turn.
	stopData string
	// mode is ToolStatusAll or ToolStatusLast.
	mode string
	th   *throttle
	// gate holds the running updates back after a 429.
	gate Gate

	// pushMu is held by a push from reading msgID to recording it.
	pushMu sync.Mutex
	mu     sync.Mutex
	calls  []*toolLine
	msgID  int
	shown  string
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

func (o Outlet) newToolStatus(ctx context.Context, stopData, mode string) *toolStatus {
	s := &toolStatus{o: o, stopData: stopData, mode: mode}
	s.th = newThrottle(ctx, o.v.EditInterval, s.pushRunning)
	return s
}

// start adds a call; args come redacted from the agent, so the cut of
// SummarizeArgs leaves no part of a secret.
func (s *toolStatus) start(id, name string, args json.RawMessage) {
	s.mu.Lock()
	s.calls = append(s.calls, &toolLine{id: id, name: name, arg: SummarizeArgs(args)})
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

// sender is one of the verbs a status message goes out by.
type sender func(ctx context.Context, m Message) (int, error)

// once is Preview without a gate: one try, never held back.
func (s *toolStatus) once(ctx context.Context, m Message) (int, error) {
	return s.o.Preview(ctx, nil, m)
}

// pushRunning shows the running state, with the Stop button: a Preview
// through the status's gate. An update Telegram does not take is skipped
// (the next one replaces it).
func (s *toolStatus) pushRunning(ctx context.Context) {
	ctx, cancel := statusSendContext(ctx)
	defer cancel()
	err := s.push(ctx, func(ctx context.Context, m Message) (int, error) { return s.o.Preview(ctx, &s.gate, m) }, true)
	if err != nil && !errors.Is(err, ErrHeld) {
		s.o.logSkipped("tool status", err)
	}
}

// show sends the running status now when it was not shown yet, as an
// Answer (a retry_after is waited out) for at most statusSendTimeout:
// what follows it in the chat must come after it, which a preview dropped
// under a 429 would not keep.
func (s *toolStatus) show(ctx context.Context) { s.pushFirst(ctx, s.o.Answer, true) }

// pushFirst sends the status through send when it was not shown yet,
// within statusSendContext; running says whether the Stop button is shown.
func (s *toolStatus) pushFirst(ctx context.Context, send sender, running bool) {
	s.mu.Lock()
	shown := s.msgID != 0
	s.mu.Unlock()
	if shown {
		return
	}
	ctx, cancel := statusSendContext(ctx)
	defer cancel()
	if err := s.push(ctx, send, running); err != nil {
		s.o.logSkipped("tool status", err)
	}
}

// push sends or edits the status message through send; running says
// whether the Stop button is shown. Pushes take turns (pushMu): the
// throttle's and an approval request's (see show) could otherwise both
// send a first message.
func (s *toolStatus) push(ctx context.Context, send sender, running bool) error {
	s.pushMu.Lock()
	defer s.pushMu.Unlock()
	text := s.render(!running)
	buttons := NoButtons()
	if running {
		buttons = &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{{{Text: "⏹ Stop", CallbackData: s.stopData}}}}
	}
	s.mu.Lock()
	msgID, shown := s.msgID, s.shown
	s.mu.Unlock()
	if text == "" || (text == shown && running) {
		return nil
	}
	m := Message{Text: text, Buttons: buttons, Edit: msgID, Silent: msgID == 0}
	id, err := send(ctx, m)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.msgID, s.shown = id, text
	s.mu.Unlock()
	if running {
		s.o.v.Statuses.shown(s.o.t.String(), id, text)
	} else {
		s.o.v.Statuses.closed(id)
	}
	return nil
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
	s.pushFirst(ctx, s.once, false)
}

// close shows the final state of a status message already shown, without
// the Stop button, as an Answer until ctx ends. When that edit fails for
// good it removes the button at least (a Preview); were even that lost,
// the button would stop nothing (the host's stop names the turn).
func (s *toolStatus) close(ctx context.Context) {
	s.mu.Lock()
	msgID := s.msgID
	s.mu.Unlock()
	if msgID == 0 {
		return
	}
	err := s.push(ctx, s.o.Answer, false)
	if err == nil {
		return
	}
	log := s.o.v.Logger.With("scope", s.o.t.String(), "err", err)
	if ctx.Err() != nil {
		log.Warn("the tool status message was not finalised in time; its Stop button stays and stops nothing")
		return
	}
	if err := s.o.RemoveButtons(ctx, msgID); err != nil {
		log.Warn("the tool status message was not finalised; its Stop button stays and stops nothing", "remove_err", err)
		return
	}
	s.o.v.Statuses.closed(msgID)
	log.Warn("the tool status message was not finalised; its Stop button was removed")
}

// closeInBackground finalises the status message in the background, so
// that its retries never hold up the answer: bounded by finishTimeout,
// given up shortly after a shutdown begins. It must be called on a
// goroutine Settings.Background counts: the shutdown waits for them.
func (s *toolStatus) closeInBackground() {
	s.o.v.Background.Go(func() {
		ctx, cancel := s.o.v.FinishContext(context.Background())
		defer cancel()
		s.close(ctx)
	})
}

// RemoveButtons removes the inline buttons of the message msgID: a
// Preview (one try).
func (o Outlet) RemoveButtons(ctx context.Context, msgID int) error {
	_, err := o.Preview(ctx, nil, Message{Edit: msgID, ButtonsOnly: true, Buttons: NoButtons()})
	return err
}

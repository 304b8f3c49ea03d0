package turnview

import (
	"context"
	"errors"
	"slices"
	"sync"

	"github.com/volcanic/telegram-agent/internal/agent"
)

// emptyAnswer stands for an answer the model left empty.
const emptyAnswer = "The model returned an empty answer — try again, or /new if this keeps happening."

// CompactedNote is shown when the session was compacted during a turn.
const CompactedNote = "🗜 compacted older messages"

// TurnOptions are what a turn shows besides its events.
type TurnOptions struct {
	// Label marks a scheduled answer (bold, before the text).
	Label string
	// ReplyTo is the message the answer answers (0: none).
	ReplyTo int
	// StatusMode is the chat's tool status mode (ToolStatusAll, ...).
	StatusMode string
	// StopData is the callback data of the status message's Stop button.
	StopData string
	// Primary returns the chat's own model, named when a fallback answers.
	Primary func() string
	// Explain words a turn's error for the chat.
	Explain func(error) string
}

// Turn is what one turn shows in the chat: the streamed answer (one
// message per text segment; a tool call ends a segment) and the tool
// status message.
type Turn struct {
	o    Outlet
	ctx  context.Context
	opts TurnOptions

	mu     sync.Mutex
	seg    *segment
	status *toolStatus
	// fallbacks are the fallback models this turn already announced.
	fallbacks []string
}

// Turn starts the output of a turn running on ctx.
func (o Outlet) Turn(ctx context.Context, opts TurnOptions) *Turn {
	return &Turn{o: o, ctx: ctx, opts: opts}
}

// takeSegment ends the segment streaming now, returning it (nil: none).
func (o *Turn) takeSegment() *segment {
	o.mu.Lock()
	defer o.mu.Unlock()
	seg := o.seg
	o.seg = nil
	return seg
}

// Emit receives the session's events; it runs on the turn's goroutine.
func (o *Turn) Emit(ev agent.Event) {
	switch ev.Kind {
	case agent.EventTextDelta:
		o.mu.Lock()
		if o.seg == nil {
			o.seg = o.o.newSegment(o.ctx, o.opts.Label, o.opts.ReplyTo)
		}
		seg := o.seg
		o.mu.Unlock()
		seg.append(ev.Text)
	case agent.EventToolStart:
		seg := o.takeSegment()
		o.mu.Lock()
		if o.status == nil && o.opts.StatusMode != ToolStatusOff {
			o.status = o.o.newToolStatus(o.ctx, o.opts.StopData, o.opts.StatusMode)
		}
		st := o.status
		o.mu.Unlock()
		if seg != nil {
			seg.finish(o.ctx, seg.text())
		}
		if st != nil {
			st.start(ev.ToolCallID, ev.ToolName, ev.Arguments)
		}
	case agent.EventCompaction:
		if seg := o.takeSegment(); seg != nil {
			seg.finish(o.ctx, seg.text())
		}
		o.note("compaction note", CompactedNote)
	case agent.EventStreamRestart:
		o.mu.Lock()
		seg := o.seg
		o.mu.Unlock()
		if seg != nil {
			seg.restart()
		}
	case agent.EventModelFallback:
		o.announceFallback(ev.Text)
	case agent.EventToolUpdate:
		if st := o.currentStatus(); st != nil && ev.Result != nil {
			st.update(ev.ToolCallID, agent.TextOf(ev.Result.Content))
		}
	case agent.EventToolEnd:
		if st := o.currentStatus(); st != nil {
			st.end(ev.ToolCallID, ev.Result, o.ctx.Err() != nil)
		}
	}
}

// note sends a silent line in its place in the turn, as an Answer.
func (o *Turn) note(what, text string) {
	if _, err := o.o.Answer(o.ctx, Message{Text: text, Silent: true}); err != nil {
		o.o.logSendError(what, err)
	}
}

// announceFallback tells the chat, once per turn and model, that model
// answered because the chat's own was unavailable.
func (o *Turn) announceFallback(model string) {
	o.mu.Lock()
	seen := slices.Contains(o.fallbacks, model)
	if !seen {
		o.fallbacks = append(o.fallbacks, model)
	}
	o.mu.Unlock()
	if !seen {
		o.note("fallback note", fallbackNote(o.opts.Primary(), model))
	}
}

// AnsweredBy returns the model that answered the turn: the last fallback
// announced, else model.
func (o *Turn) AnsweredBy(model string) string {
	o.mu.Lock()
	defer o.mu.Unlock()
	if n := len(o.fallbacks); n > 0 {
		return o.fallbacks[n-1]
	}
	return model
}

// fallbackNote is the one line a chat gets when a fallback model answers.
func fallbackNote(primary, used string) string {
	return "ℹ️ " + primary + " is unavailable right now; " + used + " answers instead."
}

// turnKey is the context key of a turn (see WithTurn).
type turnKey struct{}

// WithTurn hands the turn to what runs on the turn's context, its tool
// calls' hooks among them: the approval request finds the status line it
// must come after there (see ShowStatus).
func WithTurn(ctx context.Context, o *Turn) context.Context {
	return context.WithValue(ctx, turnKey{}, o)
}

// TurnOf returns the turn ctx carries, nil when none.
func TurnOf(ctx context.Context) *Turn {
	o, _ := ctx.Value(turnKey{}).(*Turn)
	return o
}

// Target returns the chat the turn answers.
func (o *Turn) Target() Target { return o.o.t }

// ShowStatus sends the turn's tool status now when it was not shown yet,
// so that what follows it in the chat comes after it.
func (o *Turn) ShowStatus(ctx context.Context) {
	if st := o.currentStatus(); st != nil {
		st.show(ctx)
	}
}

func (o *Turn) currentStatus() *toolStatus {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.status
}

// Finish sends the final answer, or what is known of it, then closes the
// status message in the background: the status's retries never hold up
// the answer. ctx is a FinishContext. It runs on a goroutine that
// Settings.Background counts.
func (o *Turn) Finish(ctx context.Context, final string, err error, stopped, shuttingDown bool) error {
	o.mu.Lock()
	seg, st := o.seg, o.status
	o.seg = nil
	o.mu.Unlock()
	if st != nil {
		st.settle(ctx, stopped || shuttingDown)
		defer st.closeInBackground()
	}
	streamed := ""
	if seg != nil {
		streamed = seg.text()
	}
	text := final
	if err != nil || text == "" {
		text = streamed
	}
	switch {
	case err != nil && errors.Is(err, context.Canceled):
		if text != "" {
			text += "\n\n_(stopped)_"
		}
	case err != nil:
		if text != "" {
			text += "\n\n"
		}
		text += o.opts.Explain(err)
	case text == "":
		text = emptyAnswer
	}
	if text == "" {
		if seg != nil {
			seg.discard()
		}
		return nil
	}
	if seg == nil {
		seg = o.o.newSegment(ctx, o.opts.Label, o.opts.ReplyTo)
	}
	return seg.finish(ctx, text)
}

package chat

import (
	"context"
	"errors"
	"html"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/chat/botapi"

	"github.com/volcanic/telegram-agent/internal/chat/markup"
)

// previewLimit bounds a streamed preview (drafts and edits), below
// Telegram's 4096.
const previewLimit = 4000

// throttle calls push at most once per interval, on its own goroutine,
// after kick; stop ends it without a last push.
type throttle struct {
	interval time.Duration
	push     func(context.Context)
	wake     chan struct{}
	quit     chan struct{}
	done     chan struct{}
	once     sync.Once
}

func newThrottle(ctx context.Context, interval time.Duration, push func(context.Context)) *throttle {
	t := &throttle{interval: interval, push: push, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	go t.loop(ctx)
	return t
}

func (t *throttle) kick() {
	select {
	case t.wake <- struct{}{}:
	default:
	}
}

func (t *throttle) stop() {
	t.once.Do(func() { close(t.quit) })
	<-t.done
}

func (t *throttle) loop(ctx context.Context) {
	defer close(t.done)
	var last time.Time
	for {
		select {
		case <-t.quit:
			return
		case <-ctx.Done():
			return
		case <-t.wake:
		}
		if wait := t.interval - time.Since(last); wait > 0 {
			timer := time.NewTimer(wait)
			select {
			case <-t.quit:
				timer.Stop()
				return
			case <-ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
		}
		t.push(ctx)
		last = time.Now()
	}
}

// emptyAnswer stands for an answer the model left empty.
const emptyAnswer = "The model returned an empty answer — try again, or /new if this keeps happening."

// turnOutput is what one turn shows in the chat: the streamed answer (one
// message per text segment; a tool call ends a segment) and the tool status
// message.
type turnOutput struct {
	h       *Host
	ctx     context.Context
	t       target
	turnID  string
	label   string
	replyTo int
	private bool
	// statusMode is the chat's tool status mode (see toolStatusMode).
	statusMode string

	mu     sync.Mutex
	seg    *segment
	status *toolStatus
	// fallbacks are the fallback models this turn already announced.
	fallbacks []string
}

func (h *Host) newTurnOutput(ctx context.Context, t target, turnID, label string, replyTo int) *turnOutput {
	return &turnOutput{h: h, ctx: ctx, t: t, turnID: turnID, label: label, replyTo: replyTo, private: t.chatID > 0,
		statusMode: h.toolStatusMode(t.String())}
}

// emit receives the session's events; it runs on the turn's goroutine.
func (o *turnOutput) emit(ev agent.Event) {
	switch ev.Kind {
	case agent.EventTextDelta:
		o.mu.Lock()
		if o.seg == nil {
			o.seg = o.h.newSegment(o.ctx, o.t, o.label, o.replyTo, o.private)
		}
		seg := o.seg
		o.mu.Unlock()
		seg.append(ev.Text)
	case agent.EventToolStart:
		o.mu.Lock()
		seg := o.seg
		o.seg = nil
		if o.status == nil && o.statusMode != ToolStatusOff {
			o.status = o.h.newToolStatus(o.ctx, o.t, o.turnID, o.statusMode)
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
		o.mu.Lock()
		seg := o.seg
		o.seg = nil
		o.mu.Unlock()
		if seg != nil {
			seg.finish(o.ctx, seg.text())
		}
		p := o.h.messageParams(o.t, compactedNote, "", 0)
		p.Silent = true
		if _, err := o.h.api.SendMessage(o.ctx, p); err != nil {
			o.h.logSendError("compaction note", o.t, err)
		}
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

// announceFallback tells the chat, once per turn and model, that model
// answered because the chat's own was unavailable.
func (o *turnOutput) announceFallback(model string) {
	o.mu.Lock()
	seen := slices.Contains(o.fallbacks, model)
	if !seen {
		o.fallbacks = append(o.fallbacks, model)
	}
	o.mu.Unlock()
	if seen {
		return
	}
	primary := o.h.chatModel(o.t.String())
	if primary == "" {
		primary = o.h.cfg.Model
	}
	p := o.h.messageParams(o.t, fallbackNote(primary, model), "", 0)
	p.Silent = true
	if _, err := o.h.api.SendMessage(o.ctx, p); err != nil {
		o.h.logSendError("fallback note", o.t, err)
	}
}

// answeredBy returns the model that answered the turn: the last fallback
// announced, else model.
func (o *turnOutput) answeredBy(model string) string {
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

// turnOutputKey is the context key of a turn's output (see
// withTurnOutput).
type turnOutputKey struct{}

// withTurnOutput hands the turn's output to what runs on the turn's
// context, its tool calls' hooks among them: the approval request finds
// the status line it must come after there (see Host.Ask).
func withTurnOutput(ctx context.Context, o *turnOutput) context.Context {
	return context.WithValue(ctx, turnOutputKey{}, o)
}

// turnOutputOf returns the turn output ctx carries, nil when none.
func turnOutputOf(ctx context.Context) *turnOutput {
	o, _ := ctx.Value(turnOutputKey{}).(*turnOutput)
	return o
}

// showStatus sends the turn's tool status now when it was not shown yet,
// so that what follows it in the chat comes after it.
func (o *turnOutput) showStatus(ctx context.Context) {
	if st := o.currentStatus(); st != nil {
		st.show(ctx)
	}
}

func (o *turnOutput) currentStatus() *toolStatus {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.status
}

// finish sends the final answer, or what is known of it, then closes the
// status message in the background (see closeStatus): the status's
// retries never hold up the answer. It runs on the worker's goroutine.
func (o *turnOutput) finish(ctx context.Context, final string, err error, stopped, shuttingDown bool) error {
	o.mu.Lock()
	seg, st := o.seg, o.status
	o.seg = nil
	o.mu.Unlock()
	if st != nil {
		st.settle(ctx, stopped || shuttingDown)
		defer o.h.closeStatus(st)
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
		text += turnError(err)
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
		seg = o.h.newSegment(ctx, o.t, o.label, o.replyTo, o.private)
	}
	return seg.finish(ctx, text)
}

// segment is one streamed answer message: drafts in private chats (where
// the server accepts sendMessageDraft), else a message edited in place,
// at most once per edit interval; finish sends the rendered text. The
// preview is rendered like the final text. A failed preview is only
// skipped (the next one follows): a transient error or a 429 never changes
// how the answer streams; only a server that refuses drafts (404, or a 400
// other than rejected markup) turns this segment to edits.
type segment struct {
	h       *Host
	t       target
	label   string
	replyTo int
	private bool
	started time.Time
	th      *throttle

	mu       sync.Mutex
	buf      strings.Builder
	useDraft bool
	draftID  int64
	msgID    int
	// notBefore holds previews back after a 429 until its retry_after.
	notBefore time.Time
}

func (h *Host) newSegment(ctx context.Context, t target, label string, replyTo int, private bool) *segment {
	s := &segment{h: h, t: t, label: label, replyTo: replyTo, private: private, started: time.Now(),
		useDraft: private && !h.draftsUnsupported(), draftID: rand.Int64N(1<<31) + 1}
	s.th = newThrottle(ctx, h.editInterval, s.push)
	return s
}

func (s *segment) append(delta string) {
	s.mu.Lock()
	s.buf.WriteString(delta)
	s.mu.Unlock()
	s.th.kick()
}

// restart empties the segment for an answer that streams anew (the model's
// stream was cut and the request sent again): the next preview shows only
// the new text, in the same message or draft.
func (s *segment) restart() {
	s.mu.Lock()
	s.buf.Reset()
	s.mu.Unlock()
}

func (s *segment) text() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.buf.String()
}

// prefix is the plain-text label line of a labelled (scheduled) answer.
func (s *segment) prefix() string {
	if s.label == "" {
		return ""
	}
	return s.label + "\n\n"
}

// renderAnswer renders a (possibly partial) answer as Telegram HTML, with
// the label in bold.
func (s *segment) renderAnswer(text string) string {
	out := markup.RenderHTML(text)
	if s.label != "" {
		out = "<b>" + html.EscapeString(s.label) + "</b>\n\n" + out
	}
	return out
}

// push shows the text so far: a draft, or the message edited.
func (s *segment) push(ctx context.Context) {
	s.mu.Lock()
	raw := s.buf.String()
	useDraft, draftID, msgID, notBefore := s.useDraft, s.draftID, s.msgID, s.notBefore
	s.mu.Unlock()
	if strings.TrimSpace(raw) == "" || time.Now().Before(notBefore) {
		return
	}
	if msgID == 0 && !useDraft && !s.private && !s.worthAFirstMessage(raw) {
		// In a group a message notifies everyone: the first one waits for
		// a sentence, not a word or two.
		return
	}
	// The raw text is redacted before it is rendered and cut: escaping
	// and splitting could otherwise hide a secret from the sender's pass.
	// A preview holds back a trailing run that may begin one.
	raw = s.h.cfg.Redactor.RedactPartial(raw)
	htmlText, plain := previewHTML(s.renderAnswer(raw)), preview(s.prefix()+raw)
	h := s.h
	if useDraft {
		p := botapi.Draft{ChatID: s.t.chatID, ThreadID: s.t.threadID, ID: draftID, Text: htmlText, ParseMode: models.ParseModeHTML}
		err := h.preview.SendMessageDraft(ctx, p)
		if err != nil && botapi.IsBadMarkup(err) {
			p.Text, p.ParseMode = plain, ""
			err = h.preview.SendMessageDraft(ctx, p)
		}
		if err == nil || ctx.Err() != nil {
			return
		}
		if !draftsRefused(err) {
			s.failedPreview("sendMessageDraft", err)
			return
		}
		h.logger.Debug("sendMessageDraft refused; streaming by edits", "err", err)
		if botapi.CodeOf(err) == 404 {
			h.markDraftsUnsupported()
		}
		s.mu.Lock()
		s.useDraft = false
		s.mu.Unlock()
	}
	if msgID == 0 {
		p := h.messageParams(s.t, htmlText, models.ParseModeHTML, s.replyTo)
		p.Partial = true
		m, err := h.preview.SendMessage(ctx, p)
		if err != nil && botapi.IsBadMarkup(err) {
			p.Text, p.ParseMode = plain, ""
			m, err = h.preview.SendMessage(ctx, p)
		}
		if err != nil {
			if ctx.Err() == nil {
				s.failedPreview("sendMessage", err)
			}
			return
		}
		s.mu.Lock()
		s.msgID = m.ID
		s.mu.Unlock()
		return
	}
	p := botapi.Edit{ChatID: s.t.chatID, MessageID: msgID, Text: htmlText, ParseMode: models.ParseModeHTML, Partial: true}
	_, err := h.preview.EditMessageText(ctx, p)
	if err != nil && botapi.IsBadMarkup(err) {
		p.Text, p.ParseMode = plain, ""
		_, err = h.preview.EditMessageText(ctx, p)
	}
	if err != nil && ctx.Err() == nil {
		s.failedPreview("editMessageText", err)
	}
}

// failedPreview notes a preview Telegram did not take: after a 429 the
// next one waits for retry_after.
func (s *segment) failedPreview(method string, err error) {
	if botapi.ClassOf(err) == botapi.RateLimited {
		s.mu.Lock()
		s.notBefore = time.Now().Add(botapi.RetryAfter(err))
		s.mu.Unlock()
	}
	s.h.logger.Debug("a streamed preview failed; the next one follows", "method", method, "scope", s.t.String(), "err", err)
}

// worthAFirstMessage reports whether a group's streamed answer may show:
// an edit interval after it began, with a sentence (or a line) of text.
func (s *segment) worthAFirstMessage(raw string) bool {
	if time.Since(s.started) < s.h.editInterval {
		return false
	}
	t := strings.TrimSpace(raw)
	if len([]rune(t)) >= 80 || strings.Contains(t, "\n") || strings.ContainsAny(t[len(t)-1:], ".!?:") {
		return true
	}
	return strings.Contains(t, ". ") || strings.Contains(t, "! ") || strings.Contains(t, "? ")
}

// draftsRefused reports whether sendMessageDraft failed because the server
// or the chat does not take drafts (404, or a 400 other than rejected
// markup), rather than for a passing reason.
func draftsRefused(err error) bool {
	switch botapi.CodeOf(err) {
	case 404:
		return true
	case 400:
		return !botapi.IsBadMarkup(err)
	}
	return false
}

// previewHTML cuts rendered HTML to fit a streamed preview, keeping it
// valid.
func previewHTML(s string) string {
	if markup.UTF16Len(s) <= previewLimit {
		return s
	}
	return markup.SplitMessage(s, previewLimit-2)[0] + " …"
}

// discard stops the throttle without sending anything more.
func (s *segment) discard() { s.th.stop() }

// finish stops the streaming and delivers text (Markdown) whole: rendered
// as HTML and split into messages that fit, the first replacing the
// streamed message; when Telegram rejects the markup the same text goes out
// plain. It returns the error of a part that did not go out.
func (s *segment) finish(ctx context.Context, text string) error {
	s.th.stop()
	s.mu.Lock()
	msgID := s.msgID
	s.mu.Unlock()
	h := s.h
	// Redacted before rendering and splitting, which could otherwise cut
	// or escape a secret past the sender's own pass.
	text = h.cfg.Redactor.Redact(text)
	rendered := s.renderAnswer(text)
	if visible := markup.Visible(rendered); h.cfg.Redactor.Redact(visible) != visible {
		// The Markdown split a secret that its source does not show whole
		// (sk-ab**cd**ef). The Bot API client rebuilds such a message, but
		// the secret could also straddle two parts: the whole answer goes
		// out as its visible text, redacted, plain.
		h.logger.Warn("the rendered answer shows a secret its Markdown hid; sending it as redacted plain text", "scope", s.t.String())
		return h.deliver(ctx, s.t, markup.SplitPlain(h.cfg.Redactor.Redact(visible), 0), "", msgID, s.replyTo)
	}
	if err := h.deliver(ctx, s.t, markup.SplitMessage(rendered, 0), models.ParseModeHTML, msgID, s.replyTo); err == nil || !botapi.IsBadMarkup(err) {
		return err
	}
	h.logger.Debug("telegram rejected the HTML; sending the answer as plain text")
	return h.deliver(ctx, s.t, markup.SplitPlain(s.prefix()+text, 0), "", msgID, s.replyTo)
}

// messageParams builds a sendMessage for t.
func (h *Host) messageParams(t target, text string, mode models.ParseMode, replyTo int) botapi.Message {
	return botapi.Message{ChatID: t.chatID, ThreadID: t.threadID, Text: text, ParseMode: mode, ReplyTo: replyTo}
}

// sendText sends plain text to t, split when long.
func (h *Host) sendText(ctx context.Context, t target, text string, replyTo int) error {
	return h.deliver(ctx, t, markup.SplitPlain(text, 0), "", 0, replyTo)
}

// logSendError logs a failed send: a 403 (the user blocked the bot) drops
// the message.
func (h *Host) logSendError(what string, t target, err error) {
	if botapi.ClassOf(err) == botapi.Forbidden {
		h.logger.Warn("telegram refused the message (the user blocked the bot or left); dropped", "what", what, "scope", t.String(), "err", err)
		return
	}
	h.logger.Error("sending to telegram failed", "what", what, "scope", t.String(), "err", err)
}

// logSkipped logs a status update Telegram did not take, which the next
// one or the final state replaces: at Warn, with the retry_after of a 429.
func (h *Host) logSkipped(what string, t target, err error) {
	attrs := []any{"what", what, "scope", t.String(), "err", err}
	if botapi.ClassOf(err) == botapi.RateLimited {
		attrs = append(attrs, "retry_after", botapi.RetryAfter(err))
	}
	h.logger.Warn("telegram did not take a status update; a later one replaces it", attrs...)
}

// preview cuts text to fit a streamed preview.
func preview(text string) string {
	if markup.UTF16Len(text) <= previewLimit {
		return text
	}
	n := 0
	for i, r := range text {
		if n += markup.UTF16Units(r); n > previewLimit-2 {
			return text[:i] + " …"
		}
	}
	return text
}

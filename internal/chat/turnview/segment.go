package turnview

import (
	"context"
	"html"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/chat/markup"
)

// previewLimit bounds a streamed preview (drafts and edits), below
// Telegram's 4096.
const previewLimit = 4000

// segment is one streamed answer message: drafts in private chats (where
// the server accepts sendMessageDraft), else a message edited in place,
// at most once per edit interval; finish sends the rendered text. The
// preview is rendered like the final text. A failed preview is only
// skipped (the next one follows): a transient error or a 429 never changes
// how the answer streams; only a server that refuses drafts (404, or a 400
// other than rejected markup) turns this segment to edits.
type segment struct {
	o       Outlet
	label   string
	replyTo int
	started time.Time
	th      *throttle
	// gate holds previews back after a 429 until its retry_after.
	gate Gate

	mu       sync.Mutex
	buf      strings.Builder
	useDraft bool
	draftID  int64
	msgID    int
}

func (o Outlet) newSegment(ctx context.Context, label string, replyTo int) *segment {
	s := &segment{o: o, label: label, replyTo: replyTo, started: time.Now(),
		useDraft: o.private() && !o.v.draftsUnsupported(), draftID: rand.Int64N(1<<31) + 1}
	s.th = newThrottle(ctx, o.v.EditInterval, s.push)
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

// preview is a Preview through the segment's gate; a markup Telegram
// rejects goes again as plain.
func (s *segment) preview(ctx context.Context, m Message, plain string) (int, error) {
	id, err := s.o.Preview(ctx, &s.gate, m)
	if err != nil && botapi.IsBadMarkup(err) {
		m.Text, m.HTML = plain, false
		id, err = s.o.Preview(ctx, &s.gate, m)
	}
	return id, err
}

// push shows the text so far: a draft, or the message edited. The text
// comes redacted from the agent, which holds back a trailing run that may
// begin a secret; the client holds back one the markup makes.
func (s *segment) push(ctx context.Context) {
	s.mu.Lock()
	raw := s.buf.String()
	useDraft, draftID, msgID := s.useDraft, s.draftID, s.msgID
	s.mu.Unlock()
	if strings.TrimSpace(raw) == "" || s.gate.held() {
		return
	}
	if msgID == 0 && !useDraft && !s.o.private() && !s.worthAFirstMessage(raw) {
		// In a group a message notifies everyone: the first one waits for
		// a sentence, not a word or two.
		return
	}
	htmlText, plain := previewHTML(s.renderAnswer(raw)), preview(s.prefix()+raw)
	v := s.o.v
	if useDraft {
		_, err := s.preview(ctx, Message{Draft: draftID, Text: htmlText, HTML: true}, plain)
		if err == nil || ctx.Err() != nil {
			return
		}
		if !draftsRefused(err) {
			s.failedPreview("sendMessageDraft", err)
			return
		}
		v.Logger.Debug("sendMessageDraft refused; streaming by edits", "err", err)
		if botapi.CodeOf(err) == 404 {
			v.markDraftsUnsupported()
		}
		s.mu.Lock()
		s.useDraft = false
		s.mu.Unlock()
	}
	if msgID == 0 {
		id, err := s.preview(ctx, Message{Text: htmlText, HTML: true, ReplyTo: s.replyTo, Partial: true}, plain)
		if err != nil {
			if ctx.Err() == nil {
				s.failedPreview("sendMessage", err)
			}
			return
		}
		s.mu.Lock()
		s.msgID = id
		s.mu.Unlock()
		return
	}
	if _, err := s.preview(ctx, Message{Edit: msgID, Text: htmlText, HTML: true, Partial: true}, plain); err != nil && ctx.Err() == nil {
		s.failedPreview("editMessageText", err)
	}
}

// failedPreview notes a preview Telegram did not take.
func (s *segment) failedPreview(method string, err error) {
	s.o.v.Logger.Debug("a streamed preview failed; the next one follows", "method", method, "scope", s.o.t.String(), "err", err)
}

// worthAFirstMessage reports whether a group's streamed answer may show:
// an edit interval after it began, with a sentence (or a line) of text.
func (s *segment) worthAFirstMessage(raw string) bool {
	if time.Since(s.started) < s.o.v.EditInterval {
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

// finish stops the streaming and delivers text (Markdown, redacted by the
// agent) whole, as an Answer: rendered as HTML and split into messages
// that fit, the first replacing the streamed message; when Telegram
// rejects the markup the same text goes out plain. The client checks each
// part as Telegram shows it. It returns the error of a part that did not
// go out.
func (s *segment) finish(ctx context.Context, text string) error {
	s.th.stop()
	s.mu.Lock()
	msgID := s.msgID
	s.mu.Unlock()
	_, err := s.o.Answer(ctx, Message{Text: s.renderAnswer(text), HTML: true, Plain: s.prefix() + text, Split: true, Edit: msgID, ReplyTo: s.replyTo})
	return err
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

package chat

import (
	"fmt"
	"strings"
	"testing"

	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"

	"github.com/volcanic/telegram-agent/internal/chat/markup"
)

// (5) a 5000-character answer arrives whole, in two messages.
func TestLongAnswerIsSplit(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 5000; i++ {
		fmt.Fprintf(&b, "Paragraph %d says something moderately long about the topic at hand, number %d.\n\n", i, i)
	}
	text := strings.TrimSpace(b.String())[:5000]
	text = strings.TrimSpace(text)
	faux := agenttest.NewFauxProvider(agenttest.FauxText(text))
	h := newHarness(t, harnessConfig{provider: faux})
	h.tg.SendText(userID, userID, "write a lot")
	msgs := h.waitMessages(userID, "two messages", func(msgs []telegramtest.Message) bool { return len(msgs) >= 2 })
	if len(msgs) != 2 {
		t.Fatalf("messages = %d, want 2", len(msgs))
	}
	got := strings.Fields(msgs[0].Visible + " " + msgs[1].Visible)
	want := strings.Fields(text)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("the answer did not arrive whole: got %d words, want %d", len(got), len(want))
	}
	for _, m := range msgs {
		if markup.UTF16Len(m.Text) > markup.MaxMessageLength {
			t.Errorf("a part is %d long", markup.UTF16Len(m.Text))
		}
	}
}

// The answer streams as drafts in private chats, and by edits where the
// server does not know sendMessageDraft.
func TestStreamingDraftsAndEdits(t *testing.T) {
	tg := telegramtest.New(t)
	text := "streaming the answer slowly word by word"
	faux := agenttest.NewFauxProvider(streamedAnswer(tg, text, 7), streamedAnswer(tg, text, 7))
	h := newHarness(t, harnessConfig{provider: faux, tg: tg})
	h.tg.SendText(userID, userID, "stream")
	h.waitText(userID, "streaming the answer slowly word by word")
	if len(h.tg.RequestsFor("sendMessageDraft")) == 0 {
		t.Errorf("no drafts in a private chat")
	}
	h.tg.DisableMethod("sendMessageDraft")
	before := len(h.tg.RequestsFor("editMessageText"))
	h.tg.SendText(userID, userID, "stream again")
	h.waitMessages(userID, "the second answer", func(msgs []telegramtest.Message) bool {
		return countVisible(msgs, text) == 2
	})
	if len(h.tg.RequestsFor("editMessageText")) == before {
		t.Errorf("no edits when drafts are unsupported")
	}
}

// Telegram rejecting the markup gets the same text plain.
func TestRejectedHTMLFallsBackToPlain(t *testing.T) {
	faux := agenttest.NewFauxProvider(agenttest.FauxText("**bold** claim with `code`"))
	h := newHarness(t, harnessConfig{provider: faux})
	h.tg.RejectHTML("claim")
	h.tg.SendText(userID, userID, "hi")
	m := h.waitText(userID, "**bold** claim with `code`")
	if m.ParseMode != "" {
		t.Errorf("parse mode %q, want plain", m.ParseMode)
	}
}

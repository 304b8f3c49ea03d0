package chat

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// isPreview matches the requests a streamed answer is previewed with.
func isPreview(r telegramtest.Request) bool {
	return r.Method == "sendMessageDraft" || r.Method == "sendMessage" || r.Method == "editMessageText"
}

// streamedAnswer streams text in pieces and then answers it: each piece
// after the fake server received a preview of the ones before (a draft, a
// message or an edit), so that the answer is previewed piece by piece
// without pauses of a set length. The last piece is not waited for: the
// agent's redactor may hold its end back until the answer ends.
func streamedAnswer(tg *telegramtest.Server, text string, pieces int) agenttest.FauxResponse {
	return agenttest.FauxFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		ctx, cancel := context.WithTimeout(ctx, 15*time.Second) // hang guard
		defer cancel()
		size := max(len(text)/pieces, 1)
		for i := 0; i < len(text); i += size {
			seen := 0
			for _, r := range tg.Requests() {
				if isPreview(r) {
					seen++
				}
			}
			onText(text[i:min(i+size, len(text))])
			if i+size >= len(text) {
				break
			}
			if _, err := tg.WaitForCount(ctx, seen+1, isPreview); err != nil {
				return agent.Response{}, err
			}
		}
		return agent.Response{Text: text}, nil
	})
}

// A 429 on a draft is a passing failure: the answer keeps streaming as
// drafts (no plain message, no edits) and arrives rendered, whole.
func TestDraftRateLimitKeepsStreaming(t *testing.T) {
	answer := "**Summary**: all `tests` pass.\n\n- item _one_\n- item two and some more words to stream"
	tg := telegramtest.New(t)
	faux := agenttest.NewFauxProvider(streamedAnswer(tg, answer, 12))
	h := newHarness(t, harnessConfig{provider: faux, tg: tg})
	// retry_after 0: the next piece's draft may follow at once.
	h.tg.FailNext("sendMessageDraft", 1, 429, "", 0)
	h.tg.SendText(userID, userID, "summarise")
	m := h.waitText(userID, "item two and some more words to stream")
	if m.ParseMode != "HTML" || !strings.HasPrefix(m.Visible, "Summary: all tests pass.") {
		t.Errorf("final message (parse mode %q): %q", m.ParseMode, m.Visible)
	}
	if n := len(h.tg.Messages(userID)); n != 1 {
		t.Errorf("the chat has %d messages, want the answer alone: %s", n, describe(h.tg.Messages(userID)))
	}
	if n := len(h.tg.RequestsFor("editMessageText")); n != 0 {
		t.Errorf("%d edits: a 429 on a draft switched the answer to edits", n)
	}
	for _, r := range h.tg.RequestsFor("sendMessageDraft") {
		if r.Status == 200 && r.Params["parse_mode"] != "HTML" {
			t.Errorf("a draft was sent without parse mode: %q", r.Params["text"])
		}
	}
}

// Every part of a split answer is delivered, even when one of them keeps
// failing for a while: the chat is told the answer was cut, the rest
// follows, and the failed part comes late.
func TestSplitAnswerSurvivesAFailedPart(t *testing.T) {
	var b strings.Builder
	for i := 0; b.Len() < 5000; i++ {
		fmt.Fprintf(&b, "Paragraph %d says something moderately long about the topic at hand.\n\n", i)
	}
	text := strings.TrimSpace(b.String())
	faux := agenttest.NewFauxProvider(agenttest.FauxText(text))
	h := newHarness(t, harnessConfig{provider: faux})
	// Six tries of the first part, then the cut note's first try.
	h.tg.FailNext("sendMessage", 7, 502, "", 0)
	h.tg.SendText(userID, userID, "write a lot")
	msgs := h.waitMessages(userID, "the late part", func(msgs []telegramtest.Message) bool {
		for _, m := range msgs {
			if strings.Contains(m.Visible, "sent late") {
				return true
			}
		}
		return false
	})
	var got []string
	cut := false
	for _, m := range msgs {
		switch {
		case strings.Contains(m.Visible, "The answer was cut here"):
			cut = true
		default:
			got = append(got, strings.Fields(strings.ReplaceAll(m.Visible, "(part 1 of 2, sent late)", ""))...)
		}
	}
	if !cut {
		t.Errorf("the chat was not told the answer was cut: %s", describe(msgs))
	}
	want := strings.Fields(text)
	if len(got) != len(want) {
		t.Errorf("the answer did not arrive whole: %d words, want %d", len(got), len(want))
	}
}

// When the streamed message cannot be edited, the final answer goes out as
// a new message.
func TestFinalEditFailureSendsANewMessage(t *testing.T) {
	tg := telegramtest.New(t)
	failing := make(chan struct{})
	faux := agenttest.NewFauxProvider(agenttest.FauxFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		onText("First words of the answer. ")
		select {
		case <-failing: // the preview message is out and its edits fail
		case <-ctx.Done():
			return agent.Response{}, ctx.Err()
		}
		onText("Then **the rest** of it.")
		return agent.Response{Text: "First words of the answer. Then **the rest** of it."}, nil
	}))
	h := newHarness(t, harnessConfig{provider: faux, tg: tg})
	h.tg.DisableMethod("sendMessageDraft")
	h.tg.SendText(userID, userID, "hi")
	h.tg.MustWaitFor(telegramtest.IsMethod("sendMessage"))
	h.tg.FailNext("editMessageText", 20, 400, "Bad Request: message to edit not found", 0)
	close(failing)
	h.waitText(userID, "Then the rest of it.")
}

// In a group the first streamed message waits for a sentence: a word or
// two alone would notify everyone for nothing (TestWorthAFirstMessage).
// Whatever is sent is rendered.
func TestGroupStreamWaitsForASentence(t *testing.T) {
	tg := telegramtest.New(t)
	faux := agenttest.NewFauxProvider(agenttest.FauxFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		onText("Sure")
		onText(", here is **the answer** you asked for.")
		return agent.Response{Text: "Sure, here is **the answer** you asked for."}, nil
	}))
	h := newHarness(t, harnessConfig{provider: faux, tg: tg})
	h.tg.SetChat(modelsChat(-900, false))
	h.tg.SendText(-900, userID, "@"+h.tg.BotUser().Username+" hi")
	h.waitText(-900, "Sure, here is the answer you asked for.")
	for _, r := range h.tg.RequestsFor("sendMessage") {
		if strings.Contains(r.Params["text"], "**") {
			t.Errorf("a preview shows raw Markdown: %q", r.Params["text"])
		}
	}
}

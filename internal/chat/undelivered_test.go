package chat

import (
	"testing"
	"time"

	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// A turn's outcome that Telegram does not take, however often the client
// retries (an outage of a minute or more), is not dropped as if it had
// been sent: the chat is told, in reply to the message, once Telegram
// takes messages again, and the message is done only then. Both kinds of
// outcome: an answer, and the error a voice note whose transcription
// failed gets.
func TestUndeliveredOutcomeIsToldOnceTelegramTakesIt(t *testing.T) {
	tests := []struct {
		name string
		send func(tg *telegramtest.Server) int
		opts []Option
		want string
	}{
		{name: "an answer", send: func(tg *telegramtest.Server) int { return tg.SendText(userID, userID, "answer me").ID },
			want: "could not all be sent"},
		{name: "a transcription's error", opts: []Option{WithTranscriber(failingTranscriber{})},
			send: func(tg *telegramtest.Server) int { return tg.SendVoice(userID, userID, []byte("OggS fake audio")).ID },
			want: "could not be transcribed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			faux := agenttest.NewFauxProvider()
			faux.Handle(ranUserText)
			h := newHarness(t, harnessConfig{provider: faux, opts: append(tt.opts, withReportPause(10*time.Millisecond))})
			// Every try of the client's retry policy (six), and of the
			// late parts after it, fails.
			h.tg.FailNext("sendMessage", 12, 502, "Bad Gateway", 0)
			id := tt.send(h.tg)
			told := h.waitText(userID, tt.want)
			if told.ReplyTo != id {
				t.Errorf("the chat was told %q in reply to %d, want %d", told.Visible, told.ReplyTo, id)
			}
			waitFor(t, "the message to be done", func() bool { return len(pendingEntries(t, h.agentDir)) == 0 })
		})
	}
}

// /stop's answer, which is all the chat is told about the queued messages
// it dropped, is sent until Telegram takes it (5xx answers, one after the
// other), and those messages are done only then: dropped untold, they
// would be lost without a word.
func TestStopAnswerIsSentOnceTelegramTakesIt(t *testing.T) {
	h := heldChat(t, harnessConfig{opts: []Option{withReportPause(10 * time.Millisecond)}})
	h.tg.SendText(userID, userID, "queued behind it")
	h.waitText(userID, "Queued")
	h.tg.FailNext("sendMessage", 12, 502, "Bad Gateway", 0)
	stop := h.tg.SendText(userID, userID, "/stop")
	told := h.waitText(userID, "dropped 1 queued message")
	if told.ReplyTo != stop.ID {
		t.Errorf("/stop's answer replies to %d, want %d", told.ReplyTo, stop.ID)
	}
	waitFor(t, "the dropped message to be done", func() bool { return len(pendingEntries(t, h.agentDir)) == 0 })
}

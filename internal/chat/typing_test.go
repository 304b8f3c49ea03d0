package chat

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/volcanic/telegram-agent/internal/agent"
	"github.com/volcanic/telegram-agent/internal/agenttest"
	"github.com/volcanic/telegram-agent/internal/telegramtest"
)

// blockedAnswer answers "answer to" the user's text once release is closed
// (or the turn ends); until then the turn is running. started, when not
// nil, is closed as the model is asked.
func blockedAnswer(started, release chan struct{}) agenttest.FauxResponse {
	return agenttest.FauxFunc(func(ctx context.Context, req agent.Request, onText func(string)) (agent.Response, error) {
		if started != nil {
			close(started)
		}
		select {
		case <-release:
		case <-ctx.Done():
			return agent.Response{}, ctx.Err()
		}
		return agent.Response{Text: "answer to " + lastUserText(req)}, nil
	})
}

// A typing indicator shows while the agent works: sendChatAction "typing"
// reaches the chat (the forum topic in a forum group) while the model has
// not answered yet.
func TestTypingWhileTheAgentWorks(t *testing.T) {
	tests := []struct {
		name     string
		chatID   int64
		threadID int
	}{
		{"a private chat", userID, 0},
		{"a forum topic", -700, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			release := make(chan struct{})
			h := newHarness(t, harnessConfig{provider: agenttest.NewFauxProvider(blockedAnswer(nil, release))})
			text := "work"
			var opts []telegramtest.MessageOption
			if tt.threadID != 0 {
				h.tg.SetChat(modelsChat(tt.chatID, true))
				text = "@" + h.tg.BotUser().Username + " work"
				opts = append(opts, telegramtest.InThread(tt.threadID))
			}
			h.tg.SendText(tt.chatID, userID, text, opts...)
			typing := h.tg.MustWaitFor(telegramtest.IsMethod("sendChatAction"))
			type action struct {
				ChatID, ThreadID int64
				Action           string
			}
			want := action{ChatID: tt.chatID, ThreadID: int64(tt.threadID), Action: "typing"}
			got := action{ChatID: typing.Int("chat_id"), ThreadID: typing.Int("message_thread_id"), Action: typing.Params["action"]}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the chat action (-want +got):\n%s", diff)
			}
			close(release)
			h.waitText(tt.chatID, "answer to work")
		})
	}
}

package chat

import (
	"fmt"

	"github.com/go-telegram/bot/models"
	"github.com/volcanic/telegram-agent/internal/chat/turnview"
)

// target is a chat's scope: "<chatID>" or "<chatID>:<threadID>" for a forum
// topic. It is also the session's Scope and the scheduler's target.
type target struct {
	chatID   int64
	threadID int
}

func (t target) String() string { return t.view().String() }

// view returns t as turnview names it.
func (t target) view() turnview.Target {
	return turnview.Target{ChatID: t.chatID, ThreadID: t.threadID}
}

// sessionBase is the base of the target's session ids: letters, digits,
// '-', '_' and '.' only.
func (t target) sessionBase() string {
	if t.threadID != 0 {
		return fmt.Sprintf("chat_%d_%d", t.chatID, t.threadID)
	}
	return fmt.Sprintf("chat_%d", t.chatID)
}

// parseTarget reads a scope string.
func parseTarget(s string) (target, error) {
	t, err := turnview.ParseTarget(s)
	return target{chatID: t.ChatID, threadID: t.ThreadID}, err
}

// targetOf returns the target a message belongs to: its topic in a forum
// group or in a private chat with topics (Bot API 9.3: a bot with topic
// mode on has its private chats in topics), else the chat. In a group that
// is no forum a message_thread_id names a reply thread, not a topic.
func targetOf(m *models.Message) target {
	t := target{chatID: m.Chat.ID}
	topics := m.Chat.IsForum || m.Chat.Type == models.ChatTypePrivate
	if topics && m.IsTopicMessage && m.MessageThreadID != 0 {
		t.threadID = m.MessageThreadID
	}
	return t
}

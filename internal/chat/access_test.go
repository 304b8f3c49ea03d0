package chat

import (
	"log/slog"
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/google/go-cmp/cmp"
)

// TestClassifyMentions checks that a group message is for the bot only when
// an entity says so, and that the bot's mention is cut from the text.
func TestClassifyMentions(t *testing.T) {
	me := models.User{ID: 42, IsBot: true, Username: "the_bot"}
	h := &Host{logger: slog.New(slog.DiscardHandler), allowed: map[int64]bool{userID: true}, botUser: me}
	mention := func(off, n int) models.MessageEntity {
		return models.MessageEntity{Type: models.MessageEntityTypeMention, Offset: off, Length: n}
	}
	tests := []struct {
		name     string
		text     string
		entities []models.MessageEntity
		want     string // the text the agent gets; "-" when ignored
	}{
		{"mention entity", "@the_bot hello", []models.MessageEntity{mention(0, 8)}, "hello"},
		{"mention in other case", "hi @The_Bot!", []models.MessageEntity{mention(3, 8)}, "hi !"},
		{"after an emoji", "🙂 @the_bot go", []models.MessageEntity{mention(3, 8)}, "🙂  go"},
		{"text without an entity", "@the_bot hello", nil, "-"},
		{"a longer name", "@the_bot_fan hello", []models.MessageEntity{mention(0, 12)}, "-"},
		{"another user", "@someone hello", []models.MessageEntity{mention(0, 8)}, "-"},
		{"text mention", "Bot, hello", []models.MessageEntity{{Type: models.MessageEntityTypeTextMention, Offset: 0, Length: 3, User: &me}}, "Bot, hello"},
		{"not for the bot", "just chatting", nil, "-"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			u := &models.Update{ID: 1, Message: &models.Message{
				ID: 1, Text: tt.text, Entities: tt.entities,
				From: &models.User{ID: userID},
				Chat: models.Chat{ID: -100, Type: models.ChatTypeSupergroup},
			}}
			got := "-"
			if in := h.classifyUpdate(u); in != nil {
				got = in.text
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("text (-want +got):\n%s", diff)
			}
		})
	}
}

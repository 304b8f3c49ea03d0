package telegramtest

import (
	"testing"

	"github.com/go-telegram/bot/models"
	"github.com/google/go-cmp/cmp"
)

func TestSendTextEntities(t *testing.T) {
	const (
		cmdType     = models.MessageEntityTypeBotCommand
		mentionType = models.MessageEntityTypeMention
	)
	tests := []struct {
		name string
		text string
		want []models.MessageEntity
	}{
		{"plain", "hello there", nil},
		{"command", "/new", []models.MessageEntity{{Type: cmdType, Length: 4}}},
		{"command for a bot", "/new@telegramtest_bot now", []models.MessageEntity{{Type: cmdType, Length: 21}}},
		{"bot mention", "@telegramtest_bot hello", []models.MessageEntity{{Type: mentionType, Length: 17}}},
		{"mention after emoji", "🙂 hi @telegramtest_bot!", []models.MessageEntity{{Type: mentionType, Offset: 6, Length: 17}}},
		{"two mentions", "@someone and @TelegramTest_Bot", []models.MessageEntity{
			{Type: mentionType, Length: 8}, {Type: mentionType, Offset: 13, Length: 17},
		}},
		{"command and mention", "/status @telegramtest_bot", []models.MessageEntity{
			{Type: cmdType, Length: 7}, {Type: mentionType, Offset: 8, Length: 17},
		}},
		{"e-mail address", "write to me@telegramtest_bot.org", nil},
		{"too short", "@abc is no username", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := New(t)
			m := srv.SendText(1, 1, tt.text)
			if diff := cmp.Diff(tt.want, m.Entities); diff != "" {
				t.Errorf("entities of %q (-want +got):\n%s", tt.text, diff)
			}
		})
	}
}

package telegramtest

import (
	"unicode/utf16"

	"github.com/go-telegram/bot/models"
)

// Telegram usernames are 5 to 32 characters: letters, digits and
// underscores.
const (
	minUsernameLength = 5
	maxUsernameLength = 32
)

// commandEntities returns the bot_command entity of a text that starts with
// a command, such as "/new" or "/new@some_bot".
func commandEntities(text string) []models.MessageEntity {
	if len(text) < 2 || text[0] != '/' {
		return nil
	}
	end := 1
	for end < len(text) && text[end] != ' ' && text[end] != '\n' {
		end++
	}
	return []models.MessageEntity{{Type: models.MessageEntityTypeBotCommand, Offset: 0, Length: utf16Len(text[:end])}}
}

// mentionEntities returns a mention entity for every @username in text, as
// Telegram marks them: an '@' that does not follow a username character
// (so neither an e-mail address nor the bot name of "/cmd@bot"), then 5 to
// 32 username characters.
func mentionEntities(text string) []models.MessageEntity {
	var out []models.MessageEntity
	for i := 0; i < len(text); i++ {
		if text[i] != '@' || (i > 0 && usernameByte(text[i-1])) {
			continue
		}
		end := i + 1
		for end < len(text) && usernameByte(text[end]) {
			end++
		}
		if n := end - i - 1; n >= minUsernameLength && n <= maxUsernameLength {
			out = append(out, models.MessageEntity{Type: models.MessageEntityTypeMention, Offset: utf16Len(text[:i]), Length: utf16Len(text[i:end])})
		}
		i = end - 1
	}
	return out
}

func usernameByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// utf16Len is the length of s in UTF-16 code units, the unit of entity
// offsets.
func utf16Len(s string) int { return len(utf16.Encode([]rune(s))) }

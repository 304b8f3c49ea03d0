package chat

import (
	"strings"
	"unicode/utf16"

	"github.com/go-telegram/bot/models"
)

// inbound is a message from an allowed user that the host acts on.
type inbound struct {
	updateID int64
	msg      *models.Message
	target   target
	// text is the message's text or caption, the bot's @mention removed.
	text string
	// command is the /command in lower case without the bot's name, ""
	// when the message is none; args is the rest of the text.
	command string
	args    string
	// startsTurn reports that the message goes to the agent (and so to the
	// journal).
	startsTurn bool
}

// classifyUpdate applies the access rules: only allowed users are answered,
// in private chats always, in groups only when they mention the bot, reply
// to it or send a command. It returns nil for everything else (a stranger's
// message is logged with the user id at Debug, nothing more).
func (h *Host) classifyUpdate(u *models.Update) *inbound {
	m := u.Message
	if m == nil || m.From == nil {
		return nil
	}
	if !h.allowed[m.From.ID] {
		h.logger.Debug("ignored a message from a user who is not allowed", "user_id", m.From.ID, "chat_id", m.Chat.ID)
		return nil
	}
	h.mu.Lock()
	me := h.botUser
	h.mu.Unlock()
	text, entities := m.Text, m.Entities
	if text == "" {
		text, entities = m.Caption, m.CaptionEntities
	}
	in := &inbound{updateID: u.ID, msg: m, target: targetOf(m), text: text}

	command, args, isCommand := parseCommand(text, me.Username)
	mentioned := false
	for _, e := range entities {
		switch e.Type {
		case models.MessageEntityTypeMention:
			if me.Username != "" && strings.EqualFold(entityText(text, e), "@"+me.Username) {
				mentioned = true
			}
		case models.MessageEntityTypeTextMention:
			if e.User != nil && e.User.ID == me.ID {
				mentioned = true
			}
		}
	}
	if !mentioned && me.Username != "" && len(entities) == 0 {
		// Telegram marks mentions with entities; a client that sends none
		// still gets an @name in the text recognised.
		mentioned = strings.Contains(strings.ToLower(text), "@"+strings.ToLower(me.Username))
	}
	repliesToBot := m.ReplyToMessage != nil && m.ReplyToMessage.From != nil && m.ReplyToMessage.From.ID == me.ID && me.ID != 0
	if m.Chat.Type != models.ChatTypePrivate && !isCommand && !mentioned && !repliesToBot {
		h.logger.Debug("ignored a group message that is not for the bot", "user_id", m.From.ID, "chat_id", m.Chat.ID)
		return nil
	}
	if isCommand && command == "" {
		return nil // a command for another bot
	}
	if mentioned && me.Username != "" {
		in.text = strings.TrimSpace(replaceFold(in.text, "@"+me.Username))
	}
	if isCommand {
		in.command, in.args = command, args
	}
	in.startsTurn = !isCommand || !knownCommand(command)
	if in.startsTurn && in.text == "" && !hasAttachment(m) {
		return nil
	}
	return in
}

// parseCommand splits "/cmd@bot args". command is "" when the command names
// another bot.
func parseCommand(text, botName string) (command, args string, ok bool) {
	if !strings.HasPrefix(text, "/") || len(text) < 2 {
		return "", "", false
	}
	head, rest, _ := strings.Cut(text[1:], " ")
	if i := strings.IndexAny(head, "\n"); i >= 0 {
		head, rest = head[:i], head[i+1:]+" "+rest
	}
	name, target, addressed := strings.Cut(head, "@")
	if addressed && !strings.EqualFold(target, botName) {
		return "", "", true
	}
	return strings.ToLower(name), strings.TrimSpace(rest), true
}

// entityText returns the part of text an entity covers (offsets are in
// UTF-16 code units).
func entityText(text string, e models.MessageEntity) string {
	u := utf16.Encode([]rune(text))
	if e.Offset < 0 || e.Offset+e.Length > len(u) {
		return ""
	}
	return string(utf16.Decode(u[e.Offset : e.Offset+e.Length]))
}

// replaceFold removes every case-insensitive occurrence of sub from s.
func replaceFold(s, sub string) string {
	lower, lsub := strings.ToLower(s), strings.ToLower(sub)
	if len(lower) != len(s) {
		return strings.ReplaceAll(s, sub, "")
	}
	var b strings.Builder
	for {
		i := strings.Index(lower, lsub)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		s, lower = s[i+len(sub):], lower[i+len(sub):]
	}
}

func hasAttachment(m *models.Message) bool {
	return m.Voice != nil || m.Audio != nil || len(m.Photo) > 0 || m.Document != nil
}

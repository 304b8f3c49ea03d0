package chat

import (
	"slices"
	"sort"
	"strings"
	"sync"
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
	// unsupported names what the message carries that the bot cannot read
	// ("videos", "stickers"); such a message gets a reply, never a turn.
	unsupported string
	// approvalHint reports a message that would start a turn while an
	// approval request of its chat waits: it gets a hint, never a turn.
	approvalHint bool
	// edited marks an edit of a message sent earlier (msg.ID is the
	// original's): it replaces the message while that is still queued,
	// else it runs as a message of its own, marked as an edit.
	edited bool
	// deferred reports that the command's journal entry is done by the
	// work item it queued (/new, /compact), not once its replies went
	// out.
	deferred bool
	// replies, when set, counts the replies of a journaled command still
	// on their way (see commander.reply).
	replies *replyCount
}

// replyCount counts a command's replies not sent yet, and calls done once
// its handler returned (close) and every reply went out.
type replyCount struct {
	mu            sync.Mutex
	waiting       int
	closed, fired bool
	done          func()
}

func (r *replyCount) add() {
	r.mu.Lock()
	r.waiting++
	r.mu.Unlock()
}

// sent counts one reply out.
func (r *replyCount) sent() {
	r.mu.Lock()
	r.waiting--
	r.fireLocked()
}

// close says the handler returned; done runs once no reply waits.
func (r *replyCount) close(done func()) {
	r.mu.Lock()
	r.closed, r.done = true, done
	r.fireLocked()
}

// fireLocked calls done, once, when it is due, and unlocks r.
func (r *replyCount) fireLocked() {
	fire := r.closed && r.waiting <= 0 && !r.fired
	if fire {
		r.fired = true
	}
	done := r.done
	r.mu.Unlock()
	if fire {
		done()
	}
}

// classifyUpdate applies the access rules: only allowed users are answered,
// in private chats always, in groups only when they mention the bot, reply
// to it or send a command. It returns nil for everything else (a stranger's
// message is logged with the user id at Debug, nothing more). An edited
// message is classified like a new one; an edited command is ignored, so
// that fixing a typo in one never runs it twice.
func (h *Host) classifyUpdate(u *models.Update) *inbound {
	m, edited := u.Message, false
	if m == nil && u.EditedMessage != nil {
		m, edited = u.EditedMessage, true
	}
	if m == nil || m.From == nil {
		return nil
	}
	if !h.allowed[m.From.ID] {
		h.strangers.note(m.From.ID, m.Chat.ID)
		if m.Chat.Type == models.ChatTypePrivate {
			h.strangers.reply(m.From.ID, targetOf(m))
		}
		return nil
	}
	h.mu.Lock()
	me := h.botUser
	h.mu.Unlock()
	text, entities := m.Text, m.Entities
	if text == "" {
		text, entities = m.Caption, m.CaptionEntities
	}
	in := &inbound{updateID: u.ID, msg: m, target: targetOf(m), text: text, edited: edited}

	command, args, isCommand := parseCommand(text, me.Username)
	// Telegram marks every mention with an entity; the text alone is not
	// trusted ("@name_fan" contains "@name", an e-mail address may too).
	var mentions []models.MessageEntity
	for _, e := range entities {
		switch e.Type {
		case models.MessageEntityTypeMention:
			if me.Username != "" && strings.EqualFold(entityText(text, e), "@"+me.Username) {
				mentions = append(mentions, e)
			}
		case models.MessageEntityTypeTextMention:
			if e.User != nil && e.User.ID == me.ID && me.ID != 0 {
				mentions = append(mentions, e)
			}
		}
	}
	mentioned := len(mentions) > 0
	repliesToBot := m.ReplyToMessage != nil && m.ReplyToMessage.From != nil && m.ReplyToMessage.From.ID == me.ID && me.ID != 0
	if m.Chat.Type != models.ChatTypePrivate && !isCommand && !mentioned && !repliesToBot {
		h.logger.Debug("ignored a group message that is not for the bot", "user_id", m.From.ID, "chat_id", m.Chat.ID)
		return nil
	}
	if isCommand && (command == "" || edited) {
		return nil // a command for another bot, or an edited command
	}
	in.text = strings.TrimSpace(removeMentions(text, mentions))
	if isCommand {
		in.command, in.args = command, args
	}
	in.startsTurn = !isCommand
	if kind := unsupportedKind(m); in.startsTurn && kind != "" {
		in.startsTurn, in.unsupported = false, kind
		return in
	}
	if in.startsTurn && in.text == "" && !hasAttachment(m) {
		return nil
	}
	if in.startsTurn && h.asks.waiting(in.target) {
		in.startsTurn, in.approvalHint = false, true
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
	if !commandName(name) {
		return "", "", false // "/path/to/file …" is text
	}
	if addressed && !strings.EqualFold(target, botName) {
		return "", "", true
	}
	return strings.ToLower(name), strings.TrimSpace(rest), true
}

// commandName reports whether s can name a bot command: 1 to 32 letters,
// digits and underscores, as Telegram marks them.
func commandName(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_') {
			return false
		}
	}
	return true
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

// removeMentions removes the @username mentions of the bot from text
// (entity offsets are in UTF-16 code units). A text mention (a name linked
// to the bot) is the user's wording and stays.
func removeMentions(text string, mentions []models.MessageEntity) string {
	if len(mentions) == 0 {
		return text
	}
	mentions = slices.Clone(mentions)
	sort.Slice(mentions, func(i, j int) bool { return mentions[i].Offset < mentions[j].Offset })
	u := utf16.Encode([]rune(text))
	keep := make([]uint16, 0, len(u))
	pos := 0
	for _, e := range mentions {
		if e.Type != models.MessageEntityTypeMention || e.Offset < pos || e.Offset+e.Length > len(u) {
			continue
		}
		keep = append(keep, u[pos:e.Offset]...)
		pos = e.Offset + e.Length
	}
	keep = append(keep, u[pos:]...)
	return string(utf16.Decode(keep))
}

func hasAttachment(m *models.Message) bool {
	return m.Voice != nil || m.Audio != nil || len(m.Photo) > 0 || m.Document != nil
}

// unsupportedKind names what m carries that the bot cannot read yet, in
// the plural ("videos"), or returns "" when it carries nothing of the kind.
// An animation is checked before anything else: Telegram sends a GIF as a
// document too.
func unsupportedKind(m *models.Message) string {
	switch {
	case m.Animation != nil:
		return "GIFs"
	case m.Video != nil:
		return "videos"
	case m.VideoNote != nil:
		return "round video messages"
	case m.Sticker != nil:
		return "stickers"
	case m.Location != nil || m.Venue != nil:
		return "locations"
	case m.Contact != nil:
		return "contacts"
	case m.Poll != nil:
		return "polls"
	}
	return ""
}

// unsupportedText is the reply to a message of a kind the bot cannot read.
func unsupportedText(kind string) string {
	return "I can't read " + kind + " yet — send text, a voice note, a photo or a file."
}

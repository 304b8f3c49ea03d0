package telegramtest

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/go-telegram/bot/models"
)

// defaultUpdatesLimit is getUpdates' limit when the request sets none.
const defaultUpdatesLimit = 100

type queuedUpdate struct {
	id  int64
	raw json.RawMessage
}

// Enqueue queues an update for getUpdates and returns its update_id. An
// update whose ID is 0 gets the next free id.
func (s *Server) Enqueue(update models.Update) int64 {
	s.tb.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if update.ID == 0 {
		update.ID = s.nextUpdateID
	}
	raw, err := json.Marshal(&update)
	if err != nil {
		s.tb.Errorf("telegramtest: encode update: %v", err)
		return 0
	}
	s.queueLocked(update.ID, raw)
	return update.ID
}

// EnqueueJSON queues a raw JSON update (an object as the Bot API sends it)
// and returns its update_id; an update without "update_id" gets the next
// free id.
func (s *Server) EnqueueJSON(update string) int64 {
	s.tb.Helper()
	var fields map[string]json.RawMessage
	if err := json.Unmarshal([]byte(update), &fields); err != nil {
		s.tb.Errorf("telegramtest: update is not a JSON object: %v", err)
		return 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	id := s.nextUpdateID
	if raw, ok := fields["update_id"]; ok {
		if err := json.Unmarshal(raw, &id); err != nil {
			s.tb.Errorf("telegramtest: update_id is not a number: %v", err)
			return 0
		}
	}
	fields["update_id"] = json.RawMessage(strconv.FormatInt(id, 10))
	raw, err := json.Marshal(fields)
	if err != nil {
		s.tb.Errorf("telegramtest: encode update: %v", err)
		return 0
	}
	s.queueLocked(id, raw)
	return id
}

// PendingUpdates returns how many queued updates the bot has not confirmed
// yet (confirming means polling with an offset above their id).
func (s *Server) PendingUpdates() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.updates)
}

func (s *Server) queueLocked(id int64, raw json.RawMessage) {
	if id >= s.nextUpdateID {
		s.nextUpdateID = id + 1
	}
	s.updates = append(s.updates, queuedUpdate{id: id, raw: raw})
	s.notifyLocked()
}

// serveGetUpdates answers getUpdates: it confirms the updates below offset
// and returns the queued ones, waiting up to timeout seconds for one to come.
func (s *Server) serveGetUpdates(w http.ResponseWriter, hr *http.Request, req Request) {
	offset := req.Int("offset")
	limit := int(req.Int("limit"))
	if limit <= 0 || limit > defaultUpdatesLimit {
		limit = defaultUpdatesLimit
	}
	deadline := time.NewTimer(time.Duration(req.Int("timeout")) * time.Second)
	defer deadline.Stop()

	s.mu.Lock()
	s.recordLocked(&req, nil)
	for {
		if offset > 0 {
			kept := s.updates[:0]
			for _, u := range s.updates {
				if u.id >= offset {
					kept = append(kept, u)
				}
			}
			s.updates = kept
		}
		var batch []json.RawMessage
		for _, u := range s.updates {
			if len(batch) == limit {
				break
			}
			batch = append(batch, u.raw)
		}
		changed, closed := s.changed, s.closed
		s.mu.Unlock()
		if len(batch) > 0 || closed {
			writeResult(w, nonNil(batch), nil)
			return
		}
		select {
		case <-changed:
		case <-deadline.C:
			writeResult(w, []json.RawMessage{}, nil)
			return
		case <-hr.Context().Done():
			return
		}
		s.mu.Lock()
	}
}

func nonNil(batch []json.RawMessage) []json.RawMessage {
	if batch == nil {
		return []json.RawMessage{}
	}
	return batch
}

// MessageOption changes an incoming message before it is queued.
type MessageOption func(*models.Message)

// InThread puts the message in a forum topic (message_thread_id) of a forum
// chat.
func InThread(threadID int) MessageOption {
	return func(m *models.Message) {
		m.MessageThreadID = threadID
		m.IsTopicMessage = true
		m.Chat.IsForum = true
	}
}

// InPrivateTopic puts the message in a topic of a private chat with a bot
// whose topic mode is on (Bot API 9.3): message_thread_id and
// is_topic_message, the chat staying private and no forum.
func InPrivateTopic(threadID int) MessageOption {
	return func(m *models.Message) {
		m.MessageThreadID = threadID
		m.IsTopicMessage = true
	}
}

// FromUser sets the message's sender.
func FromUser(user models.User) MessageOption {
	return func(m *models.Message) { m.From = &user }
}

// ReplyingTo makes the message a reply to reply (a message SendText returned,
// or one the bot sent, from APIMessage).
func ReplyingTo(reply models.Message) MessageOption {
	return func(m *models.Message) { m.ReplyToMessage = &reply }
}

// SetChat registers how a chat is described in updates (type, title, forum);
// without it a positive id is a private chat and a negative one a supergroup.
func (s *Server) SetChat(chat models.Chat) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.chats[chat.ID] = chat
}

// SendText queues a text message from userID in chatID, as if the user had
// sent it, and returns the message. As Telegram does, a text that starts
// with a /command gets its bot_command entity, and every @username in it
// (the bot's included) a mention entity.
func (s *Server) SendText(chatID, userID int64, text string, opts ...MessageOption) models.Message {
	s.tb.Helper()
	return s.sendIncoming(chatID, userID, opts, func(m *models.Message) {
		m.Text = text
		m.Entities = append(commandEntities(text), mentionEntities(text)...)
	})
}

// SendVoice queues a voice message from userID in chatID whose audio is
// registered as a downloadable file, and returns the message.
func (s *Server) SendVoice(chatID, userID int64, audio []byte, opts ...MessageOption) models.Message {
	s.tb.Helper()
	file := s.addGeneratedFile("voice", "voice/file_%d.oga", audio)
	return s.sendIncoming(chatID, userID, opts, func(m *models.Message) {
		m.Voice = &models.Voice{FileID: file.FileID, FileUniqueID: file.FileUniqueID, Duration: 1, MimeType: "audio/ogg", FileSize: file.FileSize}
	})
}

// SendDocument queues a document from userID in chatID whose content is
// registered as a downloadable file, and returns the message.
func (s *Server) SendDocument(chatID, userID int64, fileName string, content []byte, caption string, opts ...MessageOption) models.Message {
	s.tb.Helper()
	file := s.addGeneratedFile("document", "documents/file_%d", content)
	return s.sendIncoming(chatID, userID, opts, func(m *models.Message) {
		m.Document = &models.Document{FileID: file.FileID, FileUniqueID: file.FileUniqueID, FileName: fileName, FileSize: file.FileSize}
		m.Caption = caption
	})
}

// SendPhoto queues a photo from userID in chatID whose content is registered
// as a downloadable file, and returns the message.
func (s *Server) SendPhoto(chatID, userID int64, content []byte, caption string, opts ...MessageOption) models.Message {
	s.tb.Helper()
	file := s.addGeneratedFile("photo", "photos/file_%d.jpg", content)
	return s.sendIncoming(chatID, userID, opts, func(m *models.Message) {
		m.Photo = []models.PhotoSize{{FileID: file.FileID, FileUniqueID: file.FileUniqueID, Width: 640, Height: 480, FileSize: int(file.FileSize)}}
		m.Caption = caption
	})
}

// Send queues a message from userID in chatID that holds only what opts
// put in it (a sticker, a video, a location, a poll, …), and returns the
// message.
func (s *Server) Send(chatID, userID int64, opts ...MessageOption) models.Message {
	s.tb.Helper()
	return s.sendIncoming(chatID, userID, opts, func(*models.Message) {})
}

// SendCallback queues a callback query from userID pressing a button with
// data under the bot's message messageID in chatID, and returns the query id.
func (s *Server) SendCallback(chatID, userID int64, messageID int, data string) string {
	s.tb.Helper()
	s.mu.Lock()
	msg := models.Message{ID: messageID, Date: int(time.Now().Unix()), Chat: s.chatLocked(chatID)}
	if stored := s.findMessageLocked(chatID, messageID); stored != nil {
		msg = s.apiMessageLocked(stored)
	}
	queryID := "cbq-" + strconv.Itoa(s.nextMessageID)
	s.nextMessageID++
	s.mu.Unlock()
	s.Enqueue(models.Update{CallbackQuery: &models.CallbackQuery{
		ID:           queryID,
		From:         defaultUser(userID),
		Message:      models.MaybeInaccessibleMessage{Type: models.MaybeInaccessibleMessageTypeMessage, Message: &msg},
		ChatInstance: "chat-instance-" + strconv.FormatInt(chatID, 10),
		Data:         data,
	}})
	return queryID
}

func (s *Server) sendIncoming(chatID, userID int64, opts []MessageOption, fill func(*models.Message)) models.Message {
	s.tb.Helper()
	s.mu.Lock()
	from := defaultUser(userID)
	msg := models.Message{ID: s.nextMessageID, From: &from, Date: int(time.Now().Unix()), Chat: s.chatLocked(chatID)}
	s.nextMessageID++
	s.mu.Unlock()
	fill(&msg)
	for _, opt := range opts {
		opt(&msg)
	}
	s.Enqueue(models.Update{Message: &msg})
	return msg
}

func (s *Server) chatLocked(chatID int64) models.Chat {
	if chat, ok := s.chats[chatID]; ok {
		return chat
	}
	if chatID > 0 {
		return models.Chat{ID: chatID, Type: models.ChatTypePrivate, FirstName: "User " + strconv.FormatInt(chatID, 10)}
	}
	return models.Chat{ID: chatID, Type: models.ChatTypeSupergroup, Title: "Group " + strconv.FormatInt(chatID, 10)}
}

func defaultUser(userID int64) models.User {
	id := strconv.FormatInt(userID, 10)
	return models.User{ID: userID, FirstName: "User " + id, Username: "user" + id, LanguageCode: "en"}
}

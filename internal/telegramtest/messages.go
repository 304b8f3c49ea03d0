package telegramtest

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/go-telegram/bot/models"
)

// Telegram's limits on a message's text and a media caption, in UTF-16 code
// units of the text after entities parsing.
const (
	maxTextLength    = 4096
	maxCaptionLength = 1024
)

// Message is a message the bot sent, as the chat shows it now (after edits).
type Message struct {
	ID       int
	ChatID   int64
	ThreadID int
	// Method is the method that sent the message: sendMessage, sendDocument
	// or sendPhoto.
	Method string
	// Text is the text (or caption) as last sent, markup included.
	Text      string
	ParseMode string
	// Visible is the text a user sees: Text with HTML parsed when ParseMode
	// is HTML, else Text itself.
	Visible string
	// ReplyMarkup is the JSON text of the last reply_markup sent, if any.
	ReplyMarkup string
	// ReplyTo is the id of the message this one replies to, or 0.
	ReplyTo int
	// File is the uploaded document or photo, nil when there was none.
	File *UploadedFile
	// FileRef is the file_id or URL sent instead of an upload.
	FileRef string
	// Edits counts the successful edits of the text or the reply markup.
	Edits int
	Date  time.Time
}

// Messages returns the messages the bot has sent to chatID and not deleted,
// oldest first, with their text after edits.
func (s *Server) Messages(chatID int64) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, 0, len(s.messages[chatID]))
	for _, m := range s.messages[chatID] {
		c := *m
		if m.File != nil {
			f := UploadedFile{Filename: m.File.Filename, ContentType: m.File.ContentType, Content: slices.Clone(m.File.Content)}
			c.File = &f
		}
		out = append(out, c)
	}
	return out
}

// APIMessage returns the bot's message id in chatID as the Bot API would
// describe it, and whether there is such a message.
func (s *Server) APIMessage(chatID int64, id int) (models.Message, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.findMessageLocked(chatID, id)
	if m == nil {
		return models.Message{}, false
	}
	return s.apiMessageLocked(m), true
}

// Commands returns the commands last set with setMyCommands (nil after
// deleteMyCommands).
func (s *Server) Commands() []models.BotCommand {
	s.mu.Lock()
	raw := s.commands
	s.mu.Unlock()
	var commands []models.BotCommand
	if raw != "" {
		if err := json.Unmarshal([]byte(raw), &commands); err != nil {
			s.tb.Errorf("telegramtest: stored commands do not decode: %v", err)
		}
	}
	return commands
}

func (s *Server) findMessageLocked(chatID int64, id int) *Message {
	for _, m := range s.messages[chatID] {
		if m.ID == id {
			return m
		}
	}
	return nil
}

func (s *Server) apiMessageLocked(m *Message) models.Message {
	from := s.cfg.botUser
	out := models.Message{
		ID:              m.ID,
		MessageThreadID: m.ThreadID,
		IsTopicMessage:  m.ThreadID != 0,
		From:            &from,
		Date:            int(m.Date.Unix()),
		Chat:            s.chatLocked(m.ChatID),
	}
	if m.Edits > 0 {
		out.EditDate = int(time.Now().Unix())
	}
	if m.ReplyTo != 0 {
		out.ReplyToMessage = &models.Message{ID: m.ReplyTo, Chat: out.Chat}
	}
	switch m.Method {
	case "sendDocument":
		out.Caption = m.Visible
		out.Document = &models.Document{FileID: "sent-document-" + strconv.Itoa(m.ID), FileUniqueID: "sent-document-unique-" + strconv.Itoa(m.ID), FileName: fileName(m)}
	case "sendPhoto":
		out.Caption = m.Visible
		out.Photo = []models.PhotoSize{{FileID: "sent-photo-" + strconv.Itoa(m.ID), FileUniqueID: "sent-photo-unique-" + strconv.Itoa(m.ID), Width: 640, Height: 480}}
	default:
		out.Text = m.Visible
	}
	return out
}

func fileName(m *Message) string {
	if m.File != nil {
		return m.File.Filename
	}
	return ""
}

// sendMessage stores a text message.
func sendMessage(s *Server, r *Request) (any, *APIError) {
	chatID, apiErr := chatIDParam(r)
	if apiErr != nil {
		return nil, apiErr
	}
	visible, apiErr := s.checkTextLocked(r.Params["text"], r.Params["parse_mode"], maxTextLength, false)
	if apiErr != nil {
		return nil, apiErr
	}
	m := s.storeLocked(r, chatID, r.Params["text"], visible)
	return s.apiMessageLocked(m), nil
}

// sendMedia stores a document or photo sent in the parameter field.
func sendMedia(field string) func(*Server, *Request) (any, *APIError) {
	return func(s *Server, r *Request) (any, *APIError) {
		chatID, apiErr := chatIDParam(r)
		if apiErr != nil {
			return nil, apiErr
		}
		upload, uploaded := r.Files[field]
		ref := r.Params[field]
		if ref == "" && !uploaded {
			return nil, badRequest("there is no " + field + " in the request")
		}
		if uploaded && len(upload.Content) == 0 {
			return nil, badRequest("file must be non-empty")
		}
		visible, apiErr := s.checkTextLocked(r.Params["caption"], r.Params["parse_mode"], maxCaptionLength, true)
		if apiErr != nil {
			return nil, apiErr
		}
		m := s.storeLocked(r, chatID, r.Params["caption"], visible)
		if uploaded {
			m.File = &UploadedFile{Filename: upload.Filename, ContentType: upload.ContentType, Content: slices.Clone(upload.Content)}
		}
		m.FileRef = ref
		return s.apiMessageLocked(m), nil
	}
}

func (s *Server) storeLocked(r *Request, chatID int64, text, visible string) *Message {
	m := &Message{
		ID:          s.nextMessageID,
		ChatID:      chatID,
		ThreadID:    int(r.Int("message_thread_id")),
		Method:      r.Method,
		Text:        text,
		ParseMode:   r.Params["parse_mode"],
		Visible:     visible,
		ReplyMarkup: r.Params["reply_markup"],
		ReplyTo:     replyToParam(r),
		Date:        r.Time,
	}
	s.nextMessageID++
	s.messages[chatID] = append(s.messages[chatID], m)
	return m
}

// editMessageText replaces a stored message's text.
func editMessageText(s *Server, r *Request) (any, *APIError) {
	if r.Params["inline_message_id"] != "" {
		return true, nil
	}
	m, apiErr := s.messageParamLocked(r, "message to edit not found")
	if apiErr != nil {
		return nil, apiErr
	}
	visible, apiErr := s.checkTextLocked(r.Params["text"], r.Params["parse_mode"], maxTextLength, false)
	if apiErr != nil {
		return nil, apiErr
	}
	if visible == m.Visible && r.Params["reply_markup"] == m.ReplyMarkup {
		return nil, badRequest("message is not modified: specified new message content and reply markup are exactly the same as a current content and reply markup of the message")
	}
	m.Text, m.ParseMode, m.Visible, m.ReplyMarkup = r.Params["text"], r.Params["parse_mode"], visible, r.Params["reply_markup"]
	m.Edits++
	return s.apiMessageLocked(m), nil
}

// editMessageReplyMarkup replaces a stored message's reply markup.
func editMessageReplyMarkup(s *Server, r *Request) (any, *APIError) {
	if r.Params["inline_message_id"] != "" {
		return true, nil
	}
	m, apiErr := s.messageParamLocked(r, "message to edit not found")
	if apiErr != nil {
		return nil, apiErr
	}
	m.ReplyMarkup = r.Params["reply_markup"]
	m.Edits++
	return s.apiMessageLocked(m), nil
}

// deleteMessage removes a stored message.
func deleteMessage(s *Server, r *Request) (any, *APIError) {
	m, apiErr := s.messageParamLocked(r, "message to delete not found")
	if apiErr != nil {
		return nil, apiErr
	}
	s.messages[m.ChatID] = slices.DeleteFunc(s.messages[m.ChatID], func(other *Message) bool { return other == m })
	return true, nil
}

// sendMessageDraft checks a draft; drafts are ephemeral, so only the request
// log keeps them.
func sendMessageDraft(s *Server, r *Request) (any, *APIError) {
	if _, apiErr := chatIDParam(r); apiErr != nil {
		return nil, apiErr
	}
	if r.Int("draft_id") == 0 {
		return nil, badRequest("draft_id must be non-zero")
	}
	if _, apiErr := s.checkTextLocked(r.Params["text"], r.Params["parse_mode"], maxTextLength, true); apiErr != nil {
		return nil, apiErr
	}
	return true, nil
}

func sendChatAction(_ *Server, r *Request) (any, *APIError) {
	if _, apiErr := chatIDParam(r); apiErr != nil {
		return nil, apiErr
	}
	if r.Params["action"] == "" {
		return nil, badRequest("action is empty")
	}
	return true, nil
}

func setMyCommands(s *Server, r *Request) (any, *APIError) {
	var commands []models.BotCommand
	if err := r.DecodeParam("commands", &commands); err != nil {
		return nil, badRequest("can't parse commands JSON object")
	}
	s.commands = r.Params["commands"]
	return true, nil
}

func deleteMyCommands(s *Server, _ *Request) (any, *APIError) {
	s.commands = ""
	return true, nil
}

func getMyCommands(s *Server, _ *Request) (any, *APIError) {
	if s.commands == "" {
		return []models.BotCommand{}, nil
	}
	return json.RawMessage(s.commands), nil
}

func answerCallbackQuery(_ *Server, r *Request) (any, *APIError) {
	if r.Params["callback_query_id"] == "" {
		return nil, badRequest("query_id is empty")
	}
	return true, nil
}

func getMe(s *Server, _ *Request) (any, *APIError) {
	return s.cfg.botUser, nil
}

func alwaysTrue(_ *Server, _ *Request) (any, *APIError) {
	return true, nil
}

// checkTextLocked validates a text or caption the way Telegram does and
// returns the text a user sees.
func (s *Server) checkTextLocked(text, parseMode string, limit int, allowEmpty bool) (string, *APIError) {
	visible := text
	if strings.EqualFold(parseMode, "HTML") {
		for _, substr := range s.rejectHTML {
			if strings.Contains(text, substr) {
				return "", badRequest("can't parse entities: Unsupported start tag (rejected by telegramtest.RejectHTML)")
			}
		}
		if !s.cfg.noHTMLCheck {
			parsed, err := ParseHTML(text)
			if err != nil {
				return "", badRequest("can't parse entities: " + err.Error())
			}
			visible = parsed
		}
	}
	if !allowEmpty && strings.TrimSpace(visible) == "" {
		return "", badRequest("message text is empty")
	}
	if n := len(utf16.Encode([]rune(visible))); n > limit {
		if limit == maxCaptionLength {
			return "", badRequest("message caption is too long")
		}
		return "", badRequest("message is too long")
	}
	return visible, nil
}

func (s *Server) messageParamLocked(r *Request, notFoundText string) (*Message, *APIError) {
	chatID, apiErr := chatIDParam(r)
	if apiErr != nil {
		return nil, apiErr
	}
	m := s.findMessageLocked(chatID, int(r.Int("message_id")))
	if m == nil {
		return nil, badRequest(notFoundText)
	}
	return m, nil
}

func chatIDParam(r *Request) (int64, *APIError) {
	raw, ok := r.Params["chat_id"]
	if !ok || raw == "" {
		return 0, badRequest("chat_id is empty")
	}
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil {
		return 0, badRequest("chat not found")
	}
	return id, nil
}

func replyToParam(r *Request) int {
	if id := r.Int("reply_to_message_id"); id != 0 {
		return int(id)
	}
	var params struct {
		MessageID int `json:"message_id"`
	}
	if r.DecodeParam("reply_parameters", &params) == nil {
		return params.MessageID
	}
	return 0
}

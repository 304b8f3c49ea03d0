package botapi

import (
	"encoding/json"

	"github.com/go-telegram/bot/models"
)

// The bot decodes what Telegram sends into these, not into models.Update
// and models.Message: encoding/json builds, the first time it meets a
// struct type, the field table and encoder of every type that type
// reaches, and keeps them for the process's life. models.Message reaches
// most of the Bot API (some 390 KB of heap an idle bot kept); these reach
// only the few types the bot reads. DecodeUpdate and the send methods
// still hand out models values, holding the fields below.

// wireUpdate is the part of an Update the bot reads.
type wireUpdate struct {
	ID            int64         `json:"update_id"`
	Message       *wireMessage  `json:"message,omitempty"`
	EditedMessage *wireMessage  `json:"edited_message,omitempty"`
	CallbackQuery *wireCallback `json:"callback_query,omitempty"`
}

// wireCallback is the part of a CallbackQuery the bot reads.
type wireCallback struct {
	ID              string          `json:"id"`
	From            models.User     `json:"from,omitempty"`
	Message         json.RawMessage `json:"message,omitempty"`
	InlineMessageID string          `json:"inline_message_id,omitempty"`
	ChatInstance    string          `json:"chat_instance,omitempty"`
	Data            string          `json:"data,omitempty"`
	GameShortName   string          `json:"game_short_name,omitempty"`
}

// wireMessage is the part of a Message the bot reads: whom and where it
// is from, its text and entities, the attachments it takes, the kinds it
// names as unsupported, and the message it replies to.
type wireMessage struct {
	ID              int                    `json:"message_id"`
	MessageThreadID int                    `json:"message_thread_id,omitempty"`
	From            *models.User           `json:"from,omitempty"`
	Date            int                    `json:"date"`
	Chat            models.Chat            `json:"chat"`
	IsTopicMessage  bool                   `json:"is_topic_message,omitempty"`
	ReplyToMessage  *wireMessage           `json:"reply_to_message,omitempty"`
	EditDate        int                    `json:"edit_date,omitempty"`
	Text            string                 `json:"text,omitempty"`
	Entities        []models.MessageEntity `json:"entities,omitempty"`
	Animation       *models.Animation      `json:"animation,omitempty"`
	Audio           *models.Audio          `json:"audio,omitempty"`
	Document        *models.Document       `json:"document,omitempty"`
	Photo           []models.PhotoSize     `json:"photo,omitempty"`
	Sticker         *models.Sticker        `json:"sticker,omitempty"`
	Video           *models.Video          `json:"video,omitempty"`
	VideoNote       *models.VideoNote      `json:"video_note,omitempty"`
	Voice           *models.Voice          `json:"voice,omitempty"`
	Caption         string                 `json:"caption,omitempty"`
	CaptionEntities []models.MessageEntity `json:"caption_entities,omitempty"`
	Contact         *models.Contact        `json:"contact,omitempty"`
	Poll            *models.Poll           `json:"poll,omitempty"`
	Venue           *models.Venue          `json:"venue,omitempty"`
	Location        *models.Location       `json:"location,omitempty"`
}

// DecodeUpdate decodes one update as getUpdates or a webhook delivers it.
// The models.Update holds the fields the bot reads (wireUpdate's); the
// rest stay zero.
func DecodeUpdate(raw []byte) (*models.Update, error) {
	var w wireUpdate
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, err
	}
	u := &models.Update{ID: w.ID, Message: w.Message.message(), EditedMessage: w.EditedMessage.message()}
	if q := w.CallbackQuery; q != nil {
		u.CallbackQuery = &models.CallbackQuery{ID: q.ID, From: q.From, InlineMessageID: q.InlineMessageID,
			ChatInstance: q.ChatInstance, Data: q.Data, GameShortName: q.GameShortName}
		if len(q.Message) > 0 {
			if err := decodeMaybeInaccessible(q.Message, &u.CallbackQuery.Message); err != nil {
				return nil, err
			}
		}
	}
	return u, nil
}

// decodeMaybeInaccessible decodes a callback's message as
// models.MaybeInaccessibleMessage does: a date of 0 marks one the bot can
// no longer see.
func decodeMaybeInaccessible(raw []byte, out *models.MaybeInaccessibleMessage) error {
	var w wireMessage
	if err := json.Unmarshal(raw, &w); err != nil {
		return err
	}
	if w.Date == 0 {
		out.Type = models.MaybeInaccessibleMessageTypeInaccessibleMessage
		out.InaccessibleMessage = &models.InaccessibleMessage{Chat: w.Chat, MessageID: w.ID}
		return nil
	}
	out.Type = models.MaybeInaccessibleMessageTypeMessage
	out.Message = w.message()
	return nil
}

// message returns w as a models.Message, nil for nil.
func (w *wireMessage) message() *models.Message {
	if w == nil {
		return nil
	}
	return &models.Message{
		ID: w.ID, MessageThreadID: w.MessageThreadID, From: w.From, Date: w.Date, Chat: w.Chat,
		IsTopicMessage: w.IsTopicMessage, ReplyToMessage: w.ReplyToMessage.message(), EditDate: w.EditDate,
		Text: w.Text, Entities: w.Entities, Animation: w.Animation, Audio: w.Audio, Document: w.Document,
		Photo: w.Photo, Sticker: w.Sticker, Video: w.Video, VideoNote: w.VideoNote, Voice: w.Voice,
		Caption: w.Caption, CaptionEntities: w.CaptionEntities, Contact: w.Contact, Poll: w.Poll,
		Venue: w.Venue, Location: w.Location,
	}
}

package turnview

import (
	"context"

	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/chat/botapi"
)

// Message is what a verb sends: a new message, a new state of one sent
// (Edit), a file, a draft, a chat action or a button's answer.
type Message struct {
	// Text is the message; Telegram HTML when HTML is set.
	Text string
	HTML bool
	// Plain is what an Answer with Split sends when Telegram rejects the
	// markup of Text (HTML): the same answer as plain text.
	Plain string
	// Split: Text may be longer than one message (see Answer and Notice).
	Split   bool
	Buttons *models.InlineKeyboardMarkup
	ReplyTo int
	// Edit is the message to change (0: send a new one); with ButtonsOnly
	// only its buttons change.
	Edit        int
	ButtonsOnly bool
	// Silent sends without a notification.
	Silent bool
	// Partial marks a snapshot of a text still being written, whose
	// trailing run that could begin a secret the client holds back.
	Partial bool
	// Draft, not 0, sends the text as that draft (sendMessageDraft).
	Draft int64
	// Action, set, sends that chat action instead of a message.
	Action models.ChatAction
	// Callback, set, answers that button press, Text its toast.
	Callback string
	// File, set, uploads it, Text its caption.
	File *File
}

// File is a file to upload to the chat.
type File struct {
	// Name is the name the chat shows.
	Name string
	Data []byte
	// Photo sends it as a photo (compressed, shown inline), else as a
	// document.
	Photo bool
}

// mode is m's parse mode.
func (m Message) mode() models.ParseMode {
	if m.HTML {
		return models.ParseModeHTML
	}
	return ""
}

// send makes the one call m stands for through c, and returns the id of
// the message sent or edited (0 when none).
func (o Outlet) send(ctx context.Context, c *botapi.Client, m Message) (int, error) {
	switch {
	case m.File != nil:
		u := botapi.Upload{ChatID: o.t.ChatID, ThreadID: o.t.ThreadID, FileName: m.File.Name, Data: m.File.Data,
			Caption: m.Text, ParseMode: m.mode(), ReplyTo: m.ReplyTo, Buttons: m.Buttons, Silent: m.Silent}
		upload := c.SendDocument
		if m.File.Photo {
			upload = c.SendPhoto
		}
		sent, err := upload(ctx, u)
		if err != nil {
			return 0, err
		}
		return sent.ID, nil
	case m.Callback != "":
		return 0, c.AnswerCallbackQuery(ctx, m.Callback, m.Text)
	case m.Action != "":
		return 0, c.SendChatAction(ctx, o.t.ChatID, o.t.ThreadID, m.Action)
	case m.Draft != 0:
		return 0, c.SendMessageDraft(ctx, botapi.Draft{ChatID: o.t.ChatID, ThreadID: o.t.ThreadID, ID: m.Draft, Text: m.Text, ParseMode: m.mode()})
	case m.Edit != 0 && m.ButtonsOnly:
		return m.Edit, c.EditMessageReplyMarkup(ctx, o.t.ChatID, m.Edit, m.Buttons)
	case m.Edit != 0:
		_, err := c.EditMessageText(ctx, botapi.Edit{ChatID: o.t.ChatID, MessageID: m.Edit, Text: m.Text, ParseMode: m.mode(), Buttons: m.Buttons, Partial: m.Partial})
		return m.Edit, err
	}
	sent, err := c.SendMessage(ctx, botapi.Message{ChatID: o.t.ChatID, ThreadID: o.t.ThreadID, Text: m.Text, ParseMode: m.mode(),
		ReplyTo: m.ReplyTo, Buttons: m.Buttons, Silent: m.Silent, Partial: m.Partial})
	if err != nil {
		return 0, err
	}
	return sent.ID, nil
}

// NoButtons is an empty inline keyboard: it removes a message's buttons.
func NoButtons() *models.InlineKeyboardMarkup {
	return &models.InlineKeyboardMarkup{InlineKeyboard: [][]models.InlineKeyboardButton{}}
}

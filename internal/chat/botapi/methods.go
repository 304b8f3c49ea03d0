package botapi

import (
	"context"

	"github.com/go-telegram/bot/models"
)

// Message is a text message to send.
type Message struct {
	ChatID   int64
	ThreadID int
	Text     string
	// ParseMode is "" (plain) or models.ParseModeHTML.
	ParseMode models.ParseMode
	// ReplyTo is the message this one answers (0: none); it is sent even
	// when that message is gone.
	ReplyTo int
	// Buttons is the inline keyboard (nil: none).
	Buttons *models.InlineKeyboardMarkup
	// Silent sends the message without a notification.
	Silent bool
	// LinkPreviews shows previews of the links in the text; off by default.
	LinkPreviews bool
	// Partial marks a snapshot of a text still being written (a streamed
	// answer): a trailing run that could begin a secret is held back.
	Partial bool
}

// Edit replaces the text of a message the bot sent.
type Edit struct {
	ChatID    int64
	MessageID int
	Text      string
	ParseMode models.ParseMode
	// Buttons replaces the inline keyboard; nil removes it, as Telegram
	// does with an edit that names none.
	Buttons *models.InlineKeyboardMarkup
	// Partial is Message.Partial.
	Partial bool
}

// Draft is a streamed preview of an answer in a private chat
// (sendMessageDraft); it is always a partial text.
type Draft struct {
	ChatID   int64
	ThreadID int
	// ID names the draft: the updates of one answer share it (non-zero).
	ID        int64
	Text      string
	ParseMode models.ParseMode
}

// noPreviews returns the link_preview_options of a message without
// previews.
func noPreviews() *models.LinkPreviewOptions {
	return &models.LinkPreviewOptions{IsDisabled: new(true)}
}

type sendMessageParams struct {
	ChatID              int64                        `json:"chat_id"`
	MessageThreadID     int                          `json:"message_thread_id,omitempty"`
	Text                string                       `json:"text"`
	ParseMode           models.ParseMode             `json:"parse_mode,omitempty"`
	LinkPreviewOptions  *models.LinkPreviewOptions   `json:"link_preview_options,omitempty"`
	DisableNotification bool                         `json:"disable_notification,omitempty"`
	ReplyParameters     *models.ReplyParameters      `json:"reply_parameters,omitempty"`
	ReplyMarkup         *models.InlineKeyboardMarkup `json:"reply_markup,omitempty"`
}

// replyTo returns the reply_parameters of an answer to id (nil for 0).
func replyTo(id int) *models.ReplyParameters {
	if id == 0 {
		return nil
	}
	return &models.ReplyParameters{MessageID: id, AllowSendingWithoutReply: true}
}

// SendMessage sends m (sendMessage), redacted, under the retry policy.
func (c *Client) SendMessage(ctx context.Context, m Message) (*models.Message, error) {
	p := sendMessageParams{ChatID: m.ChatID, MessageThreadID: m.ThreadID, DisableNotification: m.Silent,
		ReplyParameters: replyTo(m.ReplyTo), ReplyMarkup: c.redactKeyboard(m.Buttons)}
	p.Text, p.ParseMode = c.outgoing("sendMessage", m.Text, m.ParseMode, m.Partial)
	if !m.LinkPreviews {
		p.LinkPreviewOptions = noPreviews()
	}
	var out wireMessage
	if err := c.call(ctx, "sendMessage", p, &out); err != nil {
		return nil, err
	}
	return out.message(), nil
}

type editMessageTextParams struct {
	ChatID      int64                        `json:"chat_id"`
	MessageID   int                          `json:"message_id"`
	Text        string                       `json:"text"`
	ParseMode   models.ParseMode             `json:"parse_mode,omitempty"`
	ReplyMarkup *models.InlineKeyboardMarkup `json:"reply_markup,omitempty"`
}

// EditMessageText replaces a message's text (editMessageText), redacted,
// under the retry policy. An edit that changes nothing is no failure: it
// returns nil, nil.
func (c *Client) EditMessageText(ctx context.Context, e Edit) (*models.Message, error) {
	p := editMessageTextParams{ChatID: e.ChatID, MessageID: e.MessageID, ReplyMarkup: c.redactKeyboard(e.Buttons)}
	p.Text, p.ParseMode = c.outgoing("editMessageText", e.Text, e.ParseMode, e.Partial)
	var out wireMessage
	if err := c.call(ctx, "editMessageText", p, &out); err != nil {
		if notModified(err) {
			return nil, nil
		}
		return nil, err
	}
	return out.message(), nil
}

type editMessageReplyMarkupParams struct {
	ChatID      int64                        `json:"chat_id"`
	MessageID   int                          `json:"message_id"`
	ReplyMarkup *models.InlineKeyboardMarkup `json:"reply_markup,omitempty"`
}

// EditMessageReplyMarkup replaces a message's inline keyboard
// (editMessageReplyMarkup; an empty keyboard removes the buttons), under
// the retry policy. An edit that changes nothing is no failure.
func (c *Client) EditMessageReplyMarkup(ctx context.Context, chatID int64, messageID int, kb *models.InlineKeyboardMarkup) error {
	p := editMessageReplyMarkupParams{ChatID: chatID, MessageID: messageID, ReplyMarkup: c.redactKeyboard(kb)}
	if err := c.call(ctx, "editMessageReplyMarkup", p, nil); err != nil && !notModified(err) {
		return err
	}
	return nil
}

type sendMessageDraftParams struct {
	ChatID          int64            `json:"chat_id"`
	MessageThreadID int              `json:"message_thread_id,omitempty"`
	DraftID         int64            `json:"draft_id"`
	Text            string           `json:"text"`
	ParseMode       models.ParseMode `json:"parse_mode,omitempty"`
}

// SendMessageDraft shows d as the draft of an answer (sendMessageDraft),
// redacted as a partial text, with one try: the next draft follows soon.
func (c *Client) SendMessageDraft(ctx context.Context, d Draft) error {
	p := sendMessageDraftParams{ChatID: d.ChatID, MessageThreadID: d.ThreadID, DraftID: d.ID}
	p.Text, p.ParseMode = c.outgoing("sendMessageDraft", d.Text, d.ParseMode, true)
	return c.callOnce(ctx, "sendMessageDraft", p, nil)
}

type sendChatActionParams struct {
	ChatID          int64             `json:"chat_id"`
	MessageThreadID int               `json:"message_thread_id,omitempty"`
	Action          models.ChatAction `json:"action"`
}

// SendChatAction shows action (typing, ...) in a chat, with one try: it is
// best effort and repeated while it matters.
func (c *Client) SendChatAction(ctx context.Context, chatID int64, threadID int, action models.ChatAction) error {
	return c.callOnce(ctx, "sendChatAction", sendChatActionParams{ChatID: chatID, MessageThreadID: threadID, Action: action}, nil)
}

type answerCallbackQueryParams struct {
	CallbackQueryID string `json:"callback_query_id"`
	Text            string `json:"text,omitempty"`
}

// AnswerCallbackQuery answers a button press with text as a toast (empty:
// none), redacted, with one try: an answer is only of use within seconds.
func (c *Client) AnswerCallbackQuery(ctx context.Context, id, text string) error {
	return c.callOnce(ctx, "answerCallbackQuery", answerCallbackQueryParams{CallbackQueryID: id, Text: c.s.red.Redact(text)}, nil)
}

type setMyCommandsParams struct {
	Commands []models.BotCommand `json:"commands"`
}

// SetMyCommands registers the bot's command menu (setMyCommands), the
// descriptions redacted, under the retry policy.
func (c *Client) SetMyCommands(ctx context.Context, commands []models.BotCommand) error {
	p := setMyCommandsParams{Commands: make([]models.BotCommand, len(commands))}
	for i, cmd := range commands {
		cmd.Description = c.s.red.Redact(cmd.Description)
		p.Commands[i] = cmd
	}
	return c.call(ctx, "setMyCommands", p, nil)
}

// GetMe returns the bot's own user (getMe), under the retry policy.
func (c *Client) GetMe(ctx context.Context) (*models.User, error) {
	var u models.User
	if err := c.call(ctx, "getMe", nil, &u); err != nil {
		return nil, err
	}
	return &u, nil
}

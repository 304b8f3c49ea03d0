package chat

import (
	"context"
	"log/slog"

	"github.com/go-telegram/bot"
	"github.com/go-telegram/bot/models"

	"github.com/volcanic/telegram-agent/internal/redactor"
)

// Sender is the part of the Bot API the host sends through. *bot.Bot
// satisfies it. Every outgoing call goes through one Sender built by
// newSafeSender, so redaction and the retry policy apply in one place.
type Sender interface {
	SendMessage(ctx context.Context, params *bot.SendMessageParams) (*models.Message, error)
	EditMessageText(ctx context.Context, params *bot.EditMessageTextParams) (*models.Message, error)
	EditMessageReplyMarkup(ctx context.Context, params *bot.EditMessageReplyMarkupParams) (*models.Message, error)
	SendMessageDraft(ctx context.Context, params *bot.SendMessageDraftParams) (bool, error)
	SendChatAction(ctx context.Context, params *bot.SendChatActionParams) (bool, error)
	SetMyCommands(ctx context.Context, params *bot.SetMyCommandsParams) (bool, error)
	GetFile(ctx context.Context, params *bot.GetFileParams) (*models.File, error)
	AnswerCallbackQuery(ctx context.Context, params *bot.AnswerCallbackQueryParams) (bool, error)
	GetMe(ctx context.Context) (*models.User, error)
}

// safeSender is the last line of defence: it redacts every text, caption,
// callback answer and command description before the call, and applies the
// retry policy to it.
type safeSender struct {
	next   Sender
	red    *redactor.Redactor
	policy RetryPolicy
	logger *slog.Logger
}

func newSafeSender(next Sender, red *redactor.Redactor, policy RetryPolicy, logger *slog.Logger) *safeSender {
	return &safeSender{next: next, red: red, policy: policy, logger: logger}
}

func (s *safeSender) redactMarkup(m models.ReplyMarkup) models.ReplyMarkup {
	kb, ok := m.(*models.InlineKeyboardMarkup)
	if !ok || kb == nil {
		return m
	}
	out := &models.InlineKeyboardMarkup{InlineKeyboard: make([][]models.InlineKeyboardButton, len(kb.InlineKeyboard))}
	for i, row := range kb.InlineKeyboard {
		out.InlineKeyboard[i] = make([]models.InlineKeyboardButton, len(row))
		for j, b := range row {
			b.Text = s.red.Redact(b.Text)
			out.InlineKeyboard[i][j] = b
		}
	}
	return out
}

func (s *safeSender) SendMessage(ctx context.Context, params *bot.SendMessageParams) (*models.Message, error) {
	p := *params
	p.Text = s.red.Redact(p.Text)
	p.ReplyMarkup = s.redactMarkup(p.ReplyMarkup)
	return retryCall(ctx, s, "sendMessage", func(ctx context.Context) (*models.Message, error) { return s.next.SendMessage(ctx, &p) })
}

func (s *safeSender) EditMessageText(ctx context.Context, params *bot.EditMessageTextParams) (*models.Message, error) {
	p := *params
	p.Text = s.red.Redact(p.Text)
	p.ReplyMarkup = s.redactMarkup(p.ReplyMarkup)
	msg, err := retryCall(ctx, s, "editMessageText", func(ctx context.Context) (*models.Message, error) { return s.next.EditMessageText(ctx, &p) })
	if err != nil && isNotModified(err) {
		return nil, nil
	}
	return msg, err
}

func (s *safeSender) EditMessageReplyMarkup(ctx context.Context, params *bot.EditMessageReplyMarkupParams) (*models.Message, error) {
	p := *params
	p.ReplyMarkup = s.redactMarkup(p.ReplyMarkup)
	msg, err := retryCall(ctx, s, "editMessageReplyMarkup", func(ctx context.Context) (*models.Message, error) { return s.next.EditMessageReplyMarkup(ctx, &p) })
	if err != nil && isNotModified(err) {
		return nil, nil
	}
	return msg, err
}

func (s *safeSender) SendMessageDraft(ctx context.Context, params *bot.SendMessageDraftParams) (bool, error) {
	p := *params
	p.Text = s.red.Redact(p.Text)
	// A draft is a preview: one try, the next one follows soon.
	return s.next.SendMessageDraft(ctx, &p)
}

func (s *safeSender) SendChatAction(ctx context.Context, params *bot.SendChatActionParams) (bool, error) {
	// A typing indicator is best effort: one try.
	return s.next.SendChatAction(ctx, params)
}

func (s *safeSender) SetMyCommands(ctx context.Context, params *bot.SetMyCommandsParams) (bool, error) {
	p := *params
	p.Commands = make([]models.BotCommand, len(params.Commands))
	for i, c := range params.Commands {
		c.Description = s.red.Redact(c.Description)
		p.Commands[i] = c
	}
	return retryCall(ctx, s, "setMyCommands", func(ctx context.Context) (bool, error) { return s.next.SetMyCommands(ctx, &p) })
}

func (s *safeSender) GetFile(ctx context.Context, params *bot.GetFileParams) (*models.File, error) {
	return retryCall(ctx, s, "getFile", func(ctx context.Context) (*models.File, error) { return s.next.GetFile(ctx, params) })
}

func (s *safeSender) AnswerCallbackQuery(ctx context.Context, params *bot.AnswerCallbackQueryParams) (bool, error) {
	p := *params
	p.Text = s.red.Redact(p.Text)
	return s.next.AnswerCallbackQuery(ctx, &p)
}

func (s *safeSender) GetMe(ctx context.Context) (*models.User, error) {
	return retryCall(ctx, s, "getMe", s.next.GetMe)
}

// retryCall runs call under the sender's retry policy.
func retryCall[T any](ctx context.Context, s *safeSender, method string, call func(context.Context) (T, error)) (T, error) {
	var out T
	err := s.policy.retry(ctx, s.logger, method, func(ctx context.Context) error {
		var err error
		out, err = call(ctx)
		return err
	})
	return out, err
}

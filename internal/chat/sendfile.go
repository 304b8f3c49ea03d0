package chat

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/chat/botapi"
)

// fileSender is the chat's side of send_file, which finds it on each
// turn's front end (see frontEnd).
type fileSender struct {
	api    *botapi.Client
	logger *slog.Logger
}

// SendFile sends f to the chat scope names (tools.FileSender), which must
// be the chat of the turn ctx belongs to (see turnChat): as a photo when
// f asks for one, else as a document, under the retry policy of every
// other send. A photo Telegram refuses (its dimensions, its format) goes as
// a document instead; photo reports which it became.
func (s fileSender) SendFile(ctx context.Context, scope string, f tools.OutgoingFile) (photo bool, err error) {
	t, err := turnChat(ctx, scope)
	if err != nil {
		return false, err
	}
	u := botapi.Upload{ChatID: t.chatID, ThreadID: t.threadID, FileName: f.Name, Data: f.Data, Caption: f.Caption}
	if f.Photo {
		_, err := s.api.SendPhoto(ctx, u)
		if err == nil {
			return true, nil
		}
		if botapi.ClassOf(err) != botapi.Permanent || ctx.Err() != nil {
			return false, fmt.Errorf("chat: sending the photo: %w", err)
		}
		s.logger.Info("telegram refused a photo; sending it as a document", "scope", scope, "err", err)
	}
	if _, err := s.api.SendDocument(ctx, u); err != nil {
		return false, fmt.Errorf("chat: sending the document: %w", err)
	}
	return false, nil
}

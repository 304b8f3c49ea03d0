package chat

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/volcanic/telegram-agent/internal/agent/tools"
	"github.com/volcanic/telegram-agent/internal/chat/botapi"
	"github.com/volcanic/telegram-agent/internal/chat/turnview"
)

// fileSender is the chat's side of send_file, which finds it on each
// turn's front end (see frontEnd).
type fileSender struct {
	view   *turnview.View
	logger *slog.Logger
}

// SendFile sends f to the chat scope names (tools.FileSender), which must
// be the chat of the turn ctx belongs to (see turnChat): as a photo when
// f asks for one, else as a document, as an Answer (every try of the
// retry policy). A photo Telegram refuses (its dimensions, its format) goes as
// a document instead; photo reports which it became.
func (h fileSender) SendFile(ctx context.Context, scope string, f tools.OutgoingFile) (photo bool, err error) {
	t, err := turnChat(ctx, scope)
	if err != nil {
		return false, err
	}
	out, file := h.view.To(t.view()), &turnview.File{Name: f.Name, Data: f.Data, Photo: f.Photo}
	if f.Photo {
		_, err := out.Answer(ctx, turnview.Message{File: file, Text: f.Caption})
		if err == nil {
			return true, nil
		}
		if botapi.ClassOf(err) != botapi.Permanent || ctx.Err() != nil {
			return false, fmt.Errorf("chat: sending the photo: %w", err)
		}
		h.logger.Info("telegram refused a photo; sending it as a document", "scope", scope, "err", err)
	}
	file.Photo = false
	if _, err := out.Answer(ctx, turnview.Message{File: file, Text: f.Caption}); err != nil {
		return false, fmt.Errorf("chat: sending the document: %w", err)
	}
	return false, nil
}
